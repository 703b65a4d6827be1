// Container health of a toolbus HTTP service (gateway, approvals): exit 0 when GET <url> answers 2xx
// within 4 s. The slim Node image has neither curl nor wget, and Node 20 has fetch.
//   node deploy/probes/http-ok.mjs <url> [--token-env <VAR>]
// --token-env sends the first bearer token of $VAR (comma- or space-separated `<name>:<role>:<token>`
// entries or bare tokens, as [gateway] tokens_env reads it): /readyz of the gateway and of the
// approvals inbox needs one when tokens are configured (any role), and a Kubernetes httpGet probe
// cannot take a header from a Secret.
const [url, flag, variable] = process.argv.slice(2);
if (url === undefined || (flag !== undefined && (flag !== "--token-env" || variable === undefined))) {
  process.stderr.write("usage: node deploy/probes/http-ok.mjs <url> [--token-env <VAR>]\n");
  process.exit(2);
}
const entry =
  variable === undefined ? undefined : (process.env[variable] ?? "").split(/[\s,]+/).find(Boolean);
// `<name>:<role>:<token>`: the token is what follows the second ":" (it may hold more).
const token = entry === undefined || !entry.includes(":") ? entry : entry.split(":").slice(2).join(":");
if (variable !== undefined && token === undefined) {
  process.stderr.write(`${variable} holds no bearer token\n`);
  process.exit(1);
}
try {
  const headers = token === undefined ? {} : { authorization: `Bearer ${token}` };
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(4_000) });
  if (response.ok) process.exit(0);
  process.stderr.write(`GET ${url} answered ${response.status}\n`);
} catch (error) {
  process.stderr.write(`GET ${url} failed: ${error instanceof Error ? error.message : String(error)}\n`);
}
process.exit(1);

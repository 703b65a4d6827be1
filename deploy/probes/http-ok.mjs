// Container health of a toolbus HTTP service (gateway, approvals): exit 0 when GET <url> answers 2xx
// within 4 s. The slim Node image has neither curl nor wget, and Node 20 has fetch.
const url = process.argv[2];
if (url === undefined) {
  process.stderr.write("usage: node deploy/probes/http-ok.mjs <url>\n");
  process.exit(2);
}
try {
  const response = await fetch(url, { signal: AbortSignal.timeout(4_000) });
  if (response.ok) process.exit(0);
  process.stderr.write(`GET ${url} answered ${response.status}\n`);
} catch (error) {
  process.stderr.write(`GET ${url} failed: ${error instanceof Error ? error.message : String(error)}\n`);
}
process.exit(1);

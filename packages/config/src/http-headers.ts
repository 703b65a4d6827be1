/**
 * The headers an HTTP MCP server is sent, read from the environment when it connects (never at
 * load time). Each variable may instead be given as a file, `<VAR>_FILE` (see secret-env.ts).
 */
import type { StreamableHttpServerConfig } from "./mcp-server.js";
import { type SecretFileReader, secretFromEnv } from "./secret-env.js";
import { readSecretFile } from "./secret-file.js";

export type Env = Readonly<Record<string, string | undefined>>;

export type HeadersResolution =
  | { ok: true; headers: Record<string, string> }
  | { ok: false; message: string };

/**
 * `http_headers`, then `env_http_headers` whose variable is set and not blank (others are skipped, as in Codex),
 * then `Authorization: Bearer <bearer_token_env_var>`, which must be set and non-empty.
 */
export function resolveHttpHeaders(
  server: Pick<StreamableHttpServerConfig, "name" | "httpHeaders" | "envHttpHeaders" | "bearerTokenEnvVar">,
  env: Env,
  read: SecretFileReader = readSecretFile,
): HeadersResolution {
  const headers: Record<string, string> = { ...server.httpHeaders };
  for (const [header, variable] of Object.entries(server.envHttpHeaders)) {
    const secret = secretFromEnv(env, variable, read);
    if (secret.state === "invalid") return { ok: false, message: `env_http_headers: ${secret.message}` };
    if (secret.state === "set" && secret.value.trim() !== "") headers[header] = secret.value;
  }
  const variable = server.bearerTokenEnvVar;
  if (variable === undefined) return { ok: true, headers };
  const token = secretFromEnv(env, variable, read);
  if (token.state === "invalid") return { ok: false, message: `bearer_token_env_var: ${token.message}` };
  if (token.state === "unset") {
    return {
      ok: false,
      message: `Environment variable ${variable} for MCP server '${server.name}' is not set`,
    };
  }
  if (token.value === "") {
    return {
      ok: false,
      message:
        token.variable === variable
          ? `Environment variable ${variable} for MCP server '${server.name}' is empty`
          : `The file ${token.source} for MCP server '${server.name}' is empty`,
    };
  }
  return { ok: true, headers: { ...headers, Authorization: `Bearer ${token.value}` } };
}

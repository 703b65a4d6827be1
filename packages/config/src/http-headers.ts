/** The headers an HTTP MCP server is sent, read from the environment when it connects (never at load time). */
import type { StreamableHttpServerConfig } from "./mcp-server.js";

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
): HeadersResolution {
  const headers: Record<string, string> = { ...server.httpHeaders };
  for (const [header, variable] of Object.entries(server.envHttpHeaders)) {
    const value = env[variable];
    if (value !== undefined && value.trim() !== "") headers[header] = value;
  }
  const variable = server.bearerTokenEnvVar;
  if (variable === undefined) return { ok: true, headers };
  const token = env[variable];
  if (token === undefined) {
    return {
      ok: false,
      message: `Environment variable ${variable} for MCP server '${server.name}' is not set`,
    };
  }
  if (token === "") {
    return {
      ok: false,
      message: `Environment variable ${variable} for MCP server '${server.name}' is empty`,
    };
  }
  return { ok: true, headers: { ...headers, Authorization: `Bearer ${token}` } };
}

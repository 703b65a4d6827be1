/** The environment a stdio MCP server's child process gets: an allow-list, never the whole parent environment. */
import type { Env } from "./http-headers.js";
import type { StdioServerConfig } from "./mcp-server.js";

/** Inherited from the parent when set (the reference's Unix list). */
export const INHERITED_ENV_VARS = [
  "HOME",
  "LOGNAME",
  "PATH",
  "SHELL",
  "USER",
  "__CF_USER_TEXT_ENCODING",
  "LANG",
  "LC_ALL",
  "TERM",
  "TMPDIR",
  "TZ",
] as const;

/**
 * The allow-list plus the server's `local` env_vars, read from `parentEnv`; then `env` on top. `remote` env_vars
 * belong to a remote executor's environment and are not read here. Nothing else leaks into the child.
 */
export function stdioChildEnv(
  server: Pick<StdioServerConfig, "env" | "envVars">,
  parentEnv: Env,
): Record<string, string> {
  const names = [
    ...INHERITED_ENV_VARS,
    ...server.envVars.filter((v) => v.source === "local").map((v) => v.name),
  ];
  const childEnv: Record<string, string> = {};
  for (const name of names) {
    const value = parentEnv[name];
    if (value !== undefined) childEnv[name] = value;
  }
  return { ...childEnv, ...server.env };
}

/** The environment a stdio MCP server's child process gets: an allow-list, never the whole parent environment. */
import type { Env } from "./http-headers.js";
import type { StdioServerConfig } from "./mcp-server.js";
import { type SecretFileReader, secretFromEnv } from "./secret-env.js";
import { readSecretFile } from "./secret-file.js";

/** Inherited from the parent when set (the reference's Unix list). None holds a secret. */
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

export type ChildEnvResolution = { ok: true; env: Record<string, string> } | { ok: false; message: string };

/** Who the child runs as when that is not toolbus's own user (`run_as`): its home and name replace toolbus's. */
export interface ChildIdentity {
  home: string;
  /** USER and LOGNAME; absent for a numeric `run_as`, which leaves them unset. */
  user?: string;
}

/**
 * The allow-list plus the server's `local` env_vars, read from `parentEnv` (a variable given as
 * `<NAME>_FILE` is read from that file and passed as `NAME`: the child gets the value, toolbus's
 * environment holds only a path); then `env` on top. `remote` env_vars belong to a remote
 * executor's environment and are not read here. Nothing else leaks into the child.
 */
export function stdioChildEnv(
  server: Pick<StdioServerConfig, "env" | "envVars">,
  parentEnv: Env,
  options: { identity?: ChildIdentity; read?: SecretFileReader } = {},
): ChildEnvResolution {
  const childEnv: Record<string, string> = {};
  for (const name of INHERITED_ENV_VARS) {
    const value = parentEnv[name];
    if (value !== undefined) childEnv[name] = value;
  }
  const { identity } = options;
  if (identity !== undefined) {
    delete childEnv.USER;
    delete childEnv.LOGNAME;
    childEnv.HOME = identity.home;
    if (identity.user !== undefined) {
      childEnv.USER = identity.user;
      childEnv.LOGNAME = identity.user;
    }
  }
  for (const { name } of server.envVars.filter((v) => v.source === "local")) {
    const secret = secretFromEnv(parentEnv, name, options.read ?? readSecretFile);
    if (secret.state === "invalid") {
      return { ok: false, message: `env_vars: ${secret.message}` };
    }
    if (secret.state === "set") childEnv[name] = secret.value;
  }
  return { ok: true, env: { ...childEnv, ...server.env } };
}

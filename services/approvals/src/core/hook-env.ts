/**
 * The environment a command hook runs with: an allow-list read from the service's own, never the
 * whole of it. The service holds DATABASE_URL, NATS credentials, gateway tokens and OTLP headers;
 * a hook is a user's shell command fed a tool call's arguments and has no business with them.
 * It gets what a shell needs (the stdio MCP servers' list, `LC_*` and `LANGUAGE` besides) and
 * what Claude Code gives its hooks: `CLAUDE_PROJECT_DIR`, the directory hooks run in.
 */
import { INHERITED_ENV_VARS } from "@toolbus/config";

export const HOOK_ENV_VARS: readonly string[] = [...INHERITED_ENV_VARS, "LANGUAGE", "TEMP", "TMP"];

export function hookEnv(
  parentEnv: Readonly<Record<string, string | undefined>>,
  projectDir: string,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(parentEnv)) {
    if (value !== undefined && (HOOK_ENV_VARS.includes(name) || name.startsWith("LC_"))) env[name] = value;
  }
  env.CLAUDE_PROJECT_DIR = parentEnv.CLAUDE_PROJECT_DIR ?? projectDir;
  return env;
}

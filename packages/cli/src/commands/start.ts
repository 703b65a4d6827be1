/**
 * `toolbus start`: hands over to the all-in-one runner. The runner is not a build-time
 * dependency of the CLI (it pulls in every service); it is loaded by name when installed.
 */
import { ConfigError, chooseLogFormat } from "@toolbus/bus";
import { ExitCode } from "../core/exit-codes.js";
import { CliError } from "../core/failure.js";
import type { CommandContext } from "./context.js";

/** Where the runner may live, first match wins. */
export const RUNNER_MODULES: readonly string[] = ["@toolbus/all-in-one"];

/** What the CLI expects the runner to export as `runAllInOne`. */
export interface AllInOneOptions {
  configPath?: string;
  env: Readonly<Record<string, string | undefined>>;
  /** Aborted on Ctrl-C / SIGTERM: stop cleanly. */
  signal: AbortSignal;
  json: boolean;
  /** `--log-format`. */
  logFormat?: string;
}
export type RunAllInOne = (options: AllInOneOptions) => Promise<number | undefined>;

export async function runStart(ctx: CommandContext): Promise<ExitCode> {
  const runner = await loadRunner();
  const configPath = typeof ctx.options.config === "string" ? ctx.options.config : undefined;
  const logFormat = ctx.options["log-format"];
  if (typeof logFormat === "string") {
    try {
      chooseLogFormat({ flag: logFormat, isTty: false });
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      throw new CliError({ kind: "usage", command: "start", message: error.problems.join("; ") });
    }
  }
  const code = await runner({
    ...(configPath !== undefined ? { configPath } : {}),
    ...(typeof logFormat === "string" ? { logFormat } : {}),
    env: ctx.terminal.env,
    signal: ctx.signal,
    json: ctx.json,
  });
  return typeof code === "number" && code !== ExitCode.ok ? ExitCode.failed : ExitCode.ok;
}

async function loadRunner(): Promise<RunAllInOne> {
  const failures: string[] = [];
  for (const specifier of RUNNER_MODULES) {
    let loaded: Record<string, unknown>;
    try {
      // A string-typed specifier: tsc does not resolve it, so the CLI builds without the runner.
      loaded = (await import(specifier)) as Record<string, unknown>;
    } catch (error) {
      if (isNotFound(error, specifier)) continue;
      failures.push(`${specifier} failed to load: ${error instanceof Error ? error.message : String(error)}`);
      continue;
    }
    if (typeof loaded.runAllInOne === "function") return loaded.runAllInOne as RunAllInOne;
    failures.push(`${specifier} does not export runAllInOne`);
  }
  throw new CliError({
    kind: "start_unavailable",
    message:
      "toolbus start needs the all-in-one runner, which is not available here" +
      (failures.length > 0
        ? ` (${failures.join("; ")})`
        : ` (${RUNNER_MODULES.join(" or ")} is not installed)`) +
      ". Run `pnpm start` in the toolbus checkout, or start the services one by one (node services/<name>/dist/main.js).",
  });
}

/** The package itself is missing (not one of its own imports). */
function isNotFound(error: unknown, specifier: string): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : "";
  return (
    (code === "ERR_MODULE_NOT_FOUND" || code === "ERR_PACKAGE_PATH_NOT_EXPORTED") &&
    message.includes(specifier)
  );
}

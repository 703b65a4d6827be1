/**
 * Runs the CLI as a user does: a child process from source (tsx, @toolbus/source condition)
 * with the test's NATS_URL and TOOLBUS_PREFIX. `runCli` waits for the exit; `spawnCli` gives
 * the live process for long-running commands (tail, approvals --watch).
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
export const CLI_MAIN = fileURLToPath(new URL("../../src/main.ts", import.meta.url));
export const CLI_BIN = fileURLToPath(new URL("../../bin/toolbus.js", import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

/** `node --conditions=@toolbus/source --import tsx <main.ts>`: how tests run TypeScript entry points. */
export function sourceArgs(main: string, args: readonly string[]): string[] {
  return ["--conditions=@toolbus/source", "--import", TSX, main, ...args];
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliEnv {
  natsUrl: string;
  prefix: string;
  /** Extra variables (COLUMNS, NO_COLOR, ...). */
  extra?: Record<string, string>;
}

function cliEnv(env: CliEnv): NodeJS.ProcessEnv {
  const { NO_COLOR: _n, FORCE_COLOR: _f, COLUMNS: _c, LOG_LEVEL: _l, ...inherited } = process.env;
  return { ...inherited, NATS_URL: env.natsUrl, TOOLBUS_PREFIX: env.prefix, ...env.extra };
}

export function spawnCli(args: readonly string[], env: CliEnv): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, sourceArgs(CLI_MAIN, args), { cwd: repoRoot, env: cliEnv(env) });
}

export function runCli(
  args: readonly string[],
  env: CliEnv,
  options: { stdin?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  return collect(spawnCli(args, env), options);
}

/** Runs the `bin/toolbus.js` launcher instead of the source entry point. */
export function runBin(args: readonly string[], env: CliEnv): Promise<CliResult> {
  return collect(spawn(process.execPath, [CLI_BIN, ...args], { cwd: repoRoot, env: cliEnv(env) }), {});
}

function collect(
  child: ChildProcessWithoutNullStreams,
  options: { stdin?: string; timeoutMs?: number },
): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  child.stdin.end(options.stdin ?? "");
  const timeoutMs = options.timeoutMs ?? 20_000;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the CLI did not exit within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Live output of a spawned CLI, and a wait for a pattern on either stream. */
export class LiveCli {
  stdout = "";
  stderr = "";
  readonly exited: Promise<number | null>;

  constructor(readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.on("data", (chunk: Buffer) => {
      this.stdout += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      this.stderr += chunk.toString("utf8");
    });
    this.exited = new Promise((resolve) => child.on("close", (code) => resolve(code)));
  }

  /** Resolves once `predicate` holds for the output so far (checked on every chunk). */
  async waitFor(
    what: string,
    predicate: (out: { stdout: string; stderr: string }) => boolean,
    timeoutMs = 15_000,
  ) {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this)) {
      if (Date.now() > deadline) {
        throw new Error(`timed out waiting for ${what}\nstdout: ${this.stdout}\nstderr: ${this.stderr}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

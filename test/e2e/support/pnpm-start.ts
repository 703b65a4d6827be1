/** `pnpm start` as a child process, as the e2e tests run it, and the little they need around it. */

import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
export const EVERYTHING = join(
  ROOT,
  "services/catalog/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
);
export const natsUrl = process.env.NATS_URL ?? "nats://127.0.0.1:4222";

export interface RunningToolbus {
  child: ChildProcess;
  /** Everything it printed so far, stdout and stderr. */
  output: () => string;
}

/** tsx's loader by path, so a child may run in a folder of its own (outside the checkout). */
const TSX = pathToFileURL(createRequire(join(ROOT, "package.json")).resolve("tsx")).href;

/**
 * Runs the all-in-one entry from source with `args`, at LOG_LEVEL warn unless `env` says
 * otherwise, in the checkout or in `cwd` (where it keeps its `.toolbus/`).
 */
export function startToolbus(args: string[], env: NodeJS.ProcessEnv, cwd = ROOT): RunningToolbus {
  return startEntry([join(ROOT, "packages/all-in-one/src/main.ts")], args, env, cwd);
}

/** Runs a TypeScript entry (and its leading arguments, e.g. the CLI's `start`) from source, as startToolbus does. */
export function startEntry(
  entry: string[],
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd = ROOT,
): RunningToolbus {
  const child = spawn(
    process.execPath,
    ["--conditions=@toolbus/source", "--import", TSX, ...entry, ...args],
    {
      cwd,
      env: { ...process.env, LOG_LEVEL: "warn", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

/**
 * Whether start-up's banner is printed whole. Its last line (Postgres) is the one to wait for
 * before reading any other: a pipe may deliver the banner in several chunks.
 */
export function bannerPrinted(toolbus: RunningToolbus): boolean {
  return toolbus.output().includes("\n  Postgres ");
}

export async function until(condition: () => boolean, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export function exited(child: ChildProcess): Promise<number | null> {
  return child.exitCode !== null
    ? Promise.resolve(child.exitCode)
    : new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

/**
 * Spawns a server process, waits for the line that says it is ready, and stops it again:
 * the one place the helpers own a child process.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";

export interface ReadyChild {
  /** The first capture group of the ready pattern. */
  ready: string;
  child: ChildProcess;
  /** Everything the process wrote to stderr so far (the last 16 KiB). */
  stderr(): string;
  stop(): Promise<void>;
}

export interface SpawnOptions {
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  /** Matched against each stdout and stderr line; group 1 is returned as `ready`. */
  readyPattern: RegExp;
  what: string;
  timeoutMs?: number;
}

export function spawnUntilReady(options: SpawnOptions): Promise<ReadyChild> {
  const { command, args, env, readyPattern, what, timeoutMs = 15_000 } = options;
  const child = spawn(command, args, { env: env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-16_384);
  });
  const stop = () => stopChild(child);
  return new Promise((resolve, reject) => {
    const fail = (reason: string) => {
      clearTimeout(timer);
      void stop();
      reject(new Error(`${what} ${reason}. Its stderr:\n${stderr}`));
    };
    const timer = setTimeout(() => fail(`did not report ready within ${timeoutMs} ms`), timeoutMs);
    const onLine = (line: string) => {
      const match = readyPattern.exec(line);
      if (!match) return;
      clearTimeout(timer);
      child.off("exit", onExit);
      resolve({ ready: match[1] ?? line, child, stderr: () => stderr, stop });
    };
    const onExit = (code: number | null, signal: string | null) =>
      fail(`exited (code ${code}, signal ${signal}) before it reported ready`);
    child.once("exit", onExit);
    child.once("error", (error) => fail(`could not start: ${error.message}`));
    if (child.stdout) createInterface({ input: child.stdout }).on("line", onLine);
    if (child.stderr) createInterface({ input: child.stderr }).on("line", onLine);
  });
}

/** SIGTERM, then SIGKILL after 3 s; resolves once the process is gone. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const killer = setTimeout(() => child.kill("SIGKILL"), 3_000);
  await exited;
  clearTimeout(killer);
}

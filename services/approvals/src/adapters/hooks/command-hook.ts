/**
 * Running one `type: "command"` hook: `sh -c <command>` with the JSON payload on stdin, stdout and
 * stderr collected up to a cap, and the whole process group killed when the hook's timeout passes
 * (so a hook that started children leaves nothing behind). The hook's environment is an allow-list
 * (core/hook-env.ts), never the service's own.
 */
import { spawn } from "node:child_process";
import type { CommandHook, HookPayload } from "@toolbus/policy";
import { hookTimeoutMs } from "@toolbus/policy";
import type { HookRun } from "../../core/index.js";
import { hookEnv } from "../../core/index.js";
import { BoundedText } from "./bounded-text.js";

export interface CommandHookOptions {
  /** Working directory of the hook; default the service's. */
  cwd?: string;
  /** The service's environment, which the hook's allow-list is read from; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Aborting kills the hook and reports it as crashed. */
  signal?: AbortSignal;
  /** When to kill it, if sooner than its `timeout` (what is left after waiting for a slot). */
  killAfterMs?: number;
}

export function runCommandHook(
  handler: CommandHook,
  payload: HookPayload,
  options: CommandHookOptions = {},
): Promise<HookRun> {
  const timeoutMs = hookTimeoutMs(handler);
  const base = { hookLabel: handler.command, timeoutMs };
  return new Promise<HookRun>((resolve) => {
    const stdout = new BoundedText();
    const stderr = new BoundedText();
    let timedOut = false;
    let aborted = false;
    let settled = false;
    const child = spawn("sh", ["-c", handler.command], {
      cwd: options.cwd,
      env: hookEnv(options.env ?? process.env, options.cwd ?? process.cwd()),
      stdio: ["pipe", "pipe", "pipe"],
      // Its own process group, so a timeout kills the shell and everything it started.
      detached: true,
    });
    const kill = () => {
      if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    };
    const timer = setTimeout(
      () => {
        timedOut = true;
        kill();
      },
      Math.min(timeoutMs, options.killAfterMs ?? timeoutMs),
    );
    const onAbort = () => {
      aborted = true;
      kill();
    };
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const finish = (run: HookRun) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      resolve(run);
    };

    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    child.on("error", (error) =>
      finish({
        ...base,
        exitCode: null,
        stdout: "",
        stderr: "",
        timedOut: false,
        crashed: true,
        error: error.message,
      }),
    );
    // `close` waits for the pipes to drain, so the output is complete.
    child.on("close", (code, killedBy) => {
      // A hook killed for its timeout leaves its group behind only if it escaped it; make sure.
      if (timedOut || aborted) kill();
      const crash = aborted
        ? "the approvals service stopped before the hook finished"
        : !timedOut && code === null
          ? `killed by ${killedBy ?? "a signal"}`
          : undefined;
      finish({
        ...base,
        exitCode: timedOut || crash !== undefined ? null : code,
        stdout: stdout.text(),
        stderr: stderr.text(),
        timedOut,
        crashed: crash !== undefined,
        ...(crash === undefined ? {} : { error: crash }),
      });
    });
    // A hook may exit without reading its input: that is its business, not an error.
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

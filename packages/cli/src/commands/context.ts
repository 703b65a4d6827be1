/** What every command gets: its arguments, the terminal, the bus (opened on first use), and Ctrl-C. */

import type { BusClient } from "../adapters/bus-client.js";
import type { Terminal } from "../adapters/terminal.js";
import type { Paint } from "../core/ansi.js";
import type { CommandSpec, OptionValues } from "../core/commands.js";
import type { ExitCode } from "../core/exit-codes.js";

export interface CommandContext {
  readonly command: CommandSpec;
  readonly positionals: readonly string[];
  readonly options: OptionValues;
  /** `--json`: only JSON on stdout. */
  readonly json: boolean;
  /** `--timeout` in ms, when given. */
  readonly timeoutMs: number | undefined;
  readonly terminal: Terminal;
  /** Colors for stdout (off for --json, pipes and NO_COLOR). */
  readonly paint: Paint;
  /** Colors for stderr. */
  readonly paintErr: Paint;
  /** Aborted on Ctrl-C or SIGTERM. */
  readonly signal: AbortSignal;
  /** Opens the bus the first time; throws `CliError` when NATS is unreachable. */
  bus(): Promise<BusClient>;
  now(): Date;
}

export type Command = (ctx: CommandContext) => Promise<ExitCode>;

/** Writes one line (or several) to stdout. */
export function out(ctx: CommandContext, ...lines: string[]): void {
  for (const line of lines) ctx.terminal.stdout.write(`${line}\n`);
}

/** Writes one line to stderr. */
export function err(ctx: CommandContext, line: string): void {
  ctx.terminal.stderr.write(`${line}\n`);
}

/** `--json` output: one JSON document on stdout. */
export function printJson(ctx: CommandContext, value: unknown): void {
  ctx.terminal.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** The request timeout: `--timeout`, else the command's default. */
export function timeoutOr(ctx: CommandContext, defaultSec: number): number {
  return ctx.timeoutMs ?? defaultSec * 1000;
}

/** Rejects with what `onAbort` returns once the signal aborts; otherwise settles like `promise`. */
export function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal, onAbort: () => Error): Promise<T> {
  if (signal.aborted) return Promise.reject(onAbort());
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(onAbort());
    signal.addEventListener("abort", abort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", abort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", abort);
        reject(error);
      },
    );
  });
}

/** Resolves when the signal aborts. */
export function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}

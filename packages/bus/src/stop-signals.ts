/**
 * How a toolbus process reads SIGINT and SIGTERM, the one rule for every entry point (a service's
 * main.ts, `pnpm start`, the `toolbus` CLI): the first asks for a clean stop; another, later,
 * means "now". A repeat within `SAME_STOP_WINDOW_MS` is the same Ctrl-C delivered twice: the
 * terminal sends it to the whole foreground process group, and a parent that forwards signals
 * (`pnpm exec`, the CLI's launcher) sends it again a moment later. Counting that as a second
 * press turned every `pnpm exec toolbus start` + Ctrl-C into an exit 130 that left the local
 * nats-server running.
 */
import type { EventEmitter } from "node:events";

export const SAME_STOP_WINDOW_MS = 1000;
export const STOP_SIGNALS: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM"];

export interface StopSignalHandlers {
  /** The first signal: stop cleanly. */
  stop(signal: NodeJS.Signals): void;
  /** A signal after the window, while the clean stop runs: exit at once. */
  force(signal: NodeJS.Signals): void;
}

export interface StopSignalOptions {
  /** Default: the process. */
  target?: Pick<EventEmitter, "on" | "off">;
  signals?: readonly NodeJS.Signals[];
  now?: () => number;
}

/** Listens until the returned function is called. */
export function onStopSignals(handlers: StopSignalHandlers, options: StopSignalOptions = {}): () => void {
  const target = options.target ?? process;
  const signals = options.signals ?? STOP_SIGNALS;
  const now = options.now ?? Date.now;
  let firstAt: number | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    const at = now();
    if (firstAt === undefined) {
      firstAt = at;
      handlers.stop(signal);
    } else if (at - firstAt >= SAME_STOP_WINDOW_MS) {
      handlers.force(signal);
    }
  };
  for (const signal of signals) target.on(signal, onSignal);
  return () => {
    for (const signal of signals) target.off(signal, onSignal);
  };
}

/**
 * A reader that went away (`toolbus start | tee log`, then Ctrl-C, which stops `tee` first) is
 * not toolbus's failure: writes to a closed pipe are dropped instead of crashing the process with
 * EPIPE in the middle of its clean stop. Other stream errors still surface.
 */
export function ignoreBrokenPipes(
  streams: readonly NodeJS.WriteStream[] = [process.stdout, process.stderr],
): void {
  for (const stream of streams) {
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EPIPE") return;
      throw error;
    });
  }
}

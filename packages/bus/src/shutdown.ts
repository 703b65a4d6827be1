/**
 * Graceful exit on SIGTERM/SIGINT: stop serving and let in-flight handlers finish, run the
 * service's closers, flush events, close NATS, exit 0. A second signal exits at once.
 */
import type { Logger } from "pino";
import type { Bus, DrainOptions } from "./bus.js";

export interface ShutdownOptions extends DrainOptions {
  logger: Logger;
  /** Run in order after the bus stopped serving, e.g. closing a pg pool or an HTTP server. */
  closers?: Array<() => Promise<void>>;
  /** Default SIGTERM and SIGINT. */
  signals?: NodeJS.Signals[];
  /** Default `process.exit`; tests pass their own. */
  exit?: (code: number) => void;
}

export interface ShutdownHandle {
  /** Runs the same shutdown a signal would (e.g. after a fatal error); resolves when it finished. */
  shutdown(reason: string): Promise<void>;
  /** Removes the signal listeners. */
  dispose(): void;
}

export function onShutdown(
  bus: Pick<Bus, "drain" | "flushEvents" | "close">,
  options: ShutdownOptions,
): ShutdownHandle {
  const { logger } = options;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const signals = options.signals ?? ["SIGTERM", "SIGINT"];
  let running: Promise<void> | undefined;

  const shutdown = (reason: string): Promise<void> => {
    running ??= (async () => {
      logger.info({ reason }, `shutting down (${reason}): finishing in-flight requests`);
      let failed = false;
      const step = async (what: string, fn: () => Promise<void>) => {
        try {
          await fn();
        } catch (err) {
          failed = true;
          logger.error({ err }, `shutdown: ${what} failed`);
        }
      };
      await step("draining the bus", () =>
        bus.drain(options.graceMs === undefined ? {} : { graceMs: options.graceMs }),
      );
      for (const [index, closer] of (options.closers ?? []).entries()) {
        await step(`closer #${index + 1}`, closer);
      }
      await step("flushing events", () => bus.flushEvents());
      await step("closing NATS", () => bus.close());
      logger.info({ failed }, failed ? "shut down with errors" : "shut down cleanly");
      dispose();
      exit(failed ? 1 : 0);
    })();
    return running;
  };

  const onSignal = (signal: NodeJS.Signals) => {
    if (running) {
      logger.warn({ signal }, `${signal} again: exiting without waiting`);
      exit(1);
      return;
    }
    void shutdown(signal);
  };
  const dispose = () => {
    for (const signal of signals) process.off(signal, onSignal);
  };
  for (const signal of signals) process.on(signal, onSignal);
  return { shutdown, dispose };
}

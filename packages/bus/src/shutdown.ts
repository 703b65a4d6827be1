/**
 * Graceful exit on SIGTERM/SIGINT: stop serving and let in-flight handlers finish, stop the
 * service, run the closers, flush events, close NATS, exit 0. A second signal, not the same one
 * delivered twice (stop-signals.ts), exits at once.
 */
import type { Logger } from "pino";
import type { Bus, DrainOptions } from "./bus.js";
import { onStopSignals } from "./stop-signals.js";

/**
 * What every toolbus service's start function returns (`startCatalogService(deps)`, …). The
 * service is given a bus it does not own: neither method closes it; whoever connected it does.
 */
export interface RunningService {
  /**
   * Stops taking requests and lets those in flight finish, aborting what still runs after
   * `graceMs`; work that only ends when asked to (a decide waiting for a human) is told to end first.
   */
  drain(options?: DrainOptions): Promise<void>;
  /**
   * Releases what the service opened: MCP servers, watches, timers, pools, HTTP listeners. Does
   * not wait for work in flight: `drain` first for a graceful stop.
   */
  stop(): Promise<void>;
}

export interface ShutdownOptions extends DrainOptions {
  logger: Logger;
  /** The service on this bus: it drains instead of the bus alone, and stops before the closers run. */
  service?: RunningService;
  /** Run in order after the bus stopped serving, e.g. closing a pg pool or an HTTP server. */
  closers?: Array<() => Promise<void>>;
  /** Default SIGTERM and SIGINT. */
  signals?: NodeJS.Signals[];
  /** Default `process.exit`; tests pass their own. */
  exit?: (code: number) => void;
  /** Default `Date.now`: when a signal came, to tell a second Ctrl-C from one delivered twice. */
  now?: () => number;
}

export interface ShutdownHandle {
  /** Runs the same shutdown a signal would (e.g. after a fatal error); resolves when it finished. */
  shutdown(reason: string): Promise<void>;
  /** Removes the signal listeners. */
  dispose(): void;
}

/**
 * `bus` is the process's own connection; none for a process whose service holds every connection
 * it uses (a connectors-only catalog), which then drains and closes them itself.
 */
export function onShutdown(
  bus: Pick<Bus, "drain" | "flushEvents" | "close"> | undefined,
  options: ShutdownOptions,
): ShutdownHandle {
  const { logger } = options;
  const exit = options.exit ?? ((code: number) => process.exit(code));
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
      const grace = options.graceMs === undefined ? {} : { graceMs: options.graceMs };
      const { service } = options;
      const draining = service ?? bus;
      if (draining) await step("draining the bus", () => draining.drain(grace));
      if (service) await step("stopping the service", () => service.stop());
      for (const [index, closer] of (options.closers ?? []).entries()) {
        await step(`closer #${index + 1}`, closer);
      }
      if (bus) {
        await step("flushing events", () => bus.flushEvents());
        await step("closing NATS", () => bus.close());
      }
      logger.info({ failed }, failed ? "shut down with errors" : "shut down cleanly");
      dispose();
      exit(failed ? 1 : 0);
    })();
    return running;
  };

  const dispose = onStopSignals(
    {
      stop: (signal) => void shutdown(signal),
      force: (signal) => {
        logger.warn({ signal }, `${signal} again: exiting without waiting`);
        exit(1);
      },
    },
    {
      ...(options.signals ? { signals: options.signals } : {}),
      ...(options.now ? { now: options.now } : {}),
    },
  );
  return { shutdown, dispose };
}

/** Shared set-up for this package's integration tests: unique names, a bus with captured logs. */
import { nuid } from "@nats-io/transport-node";
import { provided } from "@toolbus/testkit/provided";
import { afterEach } from "vitest";
import { type Bus, connectBus } from "../src/bus.js";
import { createLogger } from "../src/logger.js";

export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/** pino's numeric levels. */
export const LEVEL = { debug: 20, info: 30, warn: 40, error: 50 } as const;

/** A name no other test (or parallel run) uses: valid as a subject token and a service name. */
export function uniqueName(prefix = "t"): string {
  return `${prefix}${nuid.next()}`;
}

const open: Bus[] = [];

afterEach(async () => {
  await Promise.allSettled(open.splice(0).map((bus) => (bus.nc.isClosed() ? undefined : bus.nc.close())));
});

/** A bus for a fresh service name, closed after the test; `lines` holds what it logged. */
export async function startBus(name = uniqueName("svc")): Promise<{ bus: Bus; lines: LogLine[] }> {
  const lines: LogLine[] = [];
  const logger = createLogger({
    service: name,
    version: "1.0.0",
    level: "debug",
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) },
  });
  const bus = await connectBus({ natsUrl: provided().natsUrl, service: { name, version: "1.0.0" }, logger });
  open.push(bus);
  return { bus, lines };
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A promise with its resolve function outside, for holding a handler until a test lets it go. */
export function gate(): { promise: Promise<void>; open(): void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

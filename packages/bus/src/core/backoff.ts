/**
 * How JetStream events that were not acknowledged are retried: doubling delays up to a cap,
 * for a total time (the budget) long enough to outlast a JetStream outage of a minute or more,
 * with a bound on what is held meanwhile. Pure: the publisher applies it.
 */

export interface EventDeliveryLimits {
  /** How long an unacknowledged event is retried before it is given up on. */
  retryBudgetMs: number;
  /** Delay before the first retry; each further retry doubles it. */
  firstDelayMs: number;
  /** The longest delay between two retries. */
  maxDelayMs: number;
  /** Events held unacknowledged at once (in flight or waiting); past it a new event is dropped. */
  maxHeld: number;
  /** Bytes of event payload held unacknowledged at once; past it a new event is dropped. */
  maxHeldBytes: number;
}

/**
 * Five minutes of retries (a JetStream restart or a leader election takes seconds; a minute's
 * outage is covered with room to spare), 10,000 events or 64 MiB held at most.
 */
export const DEFAULT_EVENT_DELIVERY: Readonly<EventDeliveryLimits> = Object.freeze({
  retryBudgetMs: 5 * 60_000,
  firstDelayMs: 100,
  maxDelayMs: 5_000,
  maxHeld: 10_000,
  maxHeldBytes: 64 * 1024 * 1024,
});

/**
 * The stream's de-duplication window must cover every retry of one event (its budget plus the
 * last attempt's ack wait), or a retry of an event stored without its ack reaching us would be
 * stored twice. Streams that take events use at least this.
 */
export function eventDuplicateWindowMs(
  limits: Pick<EventDeliveryLimits, "retryBudgetMs">,
  ackWaitMs: number,
): number {
  return limits.retryBudgetMs + ackWaitMs;
}

/** The delay before retry number `retry` (1-based). */
export function retryDelayMs(
  limits: Pick<EventDeliveryLimits, "firstDelayMs" | "maxDelayMs">,
  retry: number,
): number {
  return Math.min(limits.firstDelayMs * 2 ** Math.max(0, retry - 1), limits.maxDelayMs);
}

/** True when an event first published at `firstAtMs` has used up its retries at `nowMs`. */
export function retryBudgetSpent(
  limits: Pick<EventDeliveryLimits, "retryBudgetMs">,
  firstAtMs: number,
  nowMs: number,
): boolean {
  return nowMs - firstAtMs >= limits.retryBudgetMs;
}

/** True when holding one more event of `bytes` would pass a bound. */
export function overHoldBound(
  limits: Pick<EventDeliveryLimits, "maxHeld" | "maxHeldBytes">,
  held: { count: number; bytes: number },
  bytes: number,
): boolean {
  return held.count + 1 > limits.maxHeld || held.bytes + bytes > limits.maxHeldBytes;
}

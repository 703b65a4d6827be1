/**
 * How the ingest loop waits and gives up. A batch the database cannot take now (transient) is
 * held and retried with a doubling delay, without limit: the messages stay unacknowledged in
 * the stream. A message that fails on its own (permanent) is redelivered later, with a
 * doubling delay, until it has been delivered `maxDeliveries` times; then it is parked.
 */

export interface RetryPolicy {
  /** First wait before retrying a held batch. */
  holdFirstDelayMs: number;
  holdMaxDelayMs: number;
  /** First redelivery delay of a failing message; doubles per delivery. */
  redeliveryFirstDelayMs: number;
  redeliveryMaxDelayMs: number;
  /** Deliveries of a failing message before it is parked. */
  maxDeliveries: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  holdFirstDelayMs: 100,
  holdMaxDelayMs: 5_000,
  redeliveryFirstDelayMs: 1_000,
  redeliveryMaxDelayMs: 60_000,
  maxDeliveries: 5,
};

/** The wait before retry number `attempt` (1-based) of a held batch. */
export function holdDelayMs(policy: RetryPolicy, attempt: number): number {
  return doubling(policy.holdFirstDelayMs, policy.holdMaxDelayMs, attempt);
}

export type FailedMessageAction = { kind: "redeliver"; delayMs: number } | { kind: "park" };

/** What to do with a message that failed permanently on its `deliveryCount`-th delivery (1-based). */
export function failedMessageAction(policy: RetryPolicy, deliveryCount: number): FailedMessageAction {
  if (deliveryCount >= policy.maxDeliveries) return { kind: "park" };
  return {
    kind: "redeliver",
    delayMs: doubling(policy.redeliveryFirstDelayMs, policy.redeliveryMaxDelayMs, deliveryCount),
  };
}

function doubling(first: number, max: number, attempt: number): number {
  const exponent = Math.min(Math.max(attempt, 1) - 1, 30);
  return Math.min(first * 2 ** exponent, max);
}

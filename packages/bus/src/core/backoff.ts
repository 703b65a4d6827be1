/** Delays between retries of a failed JetStream publish ack: bounded, doubling, no jitter needed at this scale. */

export interface RetryPolicy {
  /** Attempts after the first; 0 means never retry. */
  retries: number;
  firstDelayMs: number;
  maxDelayMs: number;
}

export const EVENT_RETRY_POLICY: RetryPolicy = { retries: 3, firstDelayMs: 100, maxDelayMs: 2_000 };

/** The delay before retry number `retry` (1-based), or undefined when no retry is left. */
export function retryDelayMs(policy: RetryPolicy, retry: number): number | undefined {
  if (retry < 1 || retry > policy.retries) return undefined;
  return Math.min(policy.firstDelayMs * 2 ** (retry - 1), policy.maxDelayMs);
}

/**
 * The limits every toolbus stream is created with: a max age and a max size (the oldest
 * messages go first past either), and for streams that take events a de-duplication window
 * that covers the publisher's retries.
 */

export interface StreamLimits {
  maxAgeMs: number;
  maxBytes: number;
}

/** The stream-config fields, in JetStream's units (nanoseconds). */
export interface StreamLimitFields {
  max_age: number;
  max_bytes: number;
  duplicate_window?: number;
}

const NANOS_PER_MILLI = 1_000_000;

/**
 * `duplicateWindowMs` is capped at the max age: JetStream refuses a window longer than the
 * messages it remembers.
 */
export function streamLimitFields(limits: StreamLimits, duplicateWindowMs?: number): StreamLimitFields {
  return {
    max_age: limits.maxAgeMs * NANOS_PER_MILLI,
    max_bytes: limits.maxBytes,
    ...(duplicateWindowMs === undefined
      ? {}
      : { duplicate_window: Math.min(duplicateWindowMs, limits.maxAgeMs) * NANOS_PER_MILLI }),
  };
}

/**
 * Duplicate call ids (a redelivered request, a client retry): a repeat of a call id that is in
 * flight, or that finished less than `ttlMs` ago, gets the first call's promise instead of
 * running again. Memory is bounded by `maxEntries`: finished entries go first, oldest first,
 * and only then calls still in flight (which keep running; only their memory is dropped).
 * Expiry is checked lazily against the injected clock, so no timers are involved.
 */

export interface CallDeduperOptions {
  ttlMs: number;
  maxEntries: number;
  /** Milliseconds on any monotonic clock. */
  now: () => number;
}

export interface CallDeduper {
  run<T>(callId: string, fn: () => Promise<T>): Promise<T>;
  /** Entries held now (in flight or remembered). */
  readonly size: number;
}

interface Entry {
  promise: Promise<unknown>;
  settledAt?: number;
}

export function createCallDeduper(options: CallDeduperOptions): CallDeduper {
  const { ttlMs, maxEntries, now } = options;
  // Map order is recency order: a hit moves its entry to the end.
  const entries = new Map<string, Entry>();

  const expired = (entry: Entry) => entry.settledAt !== undefined && now() - entry.settledAt >= ttlMs;

  const evict = () => {
    for (const [callId, entry] of entries) {
      if (entries.size <= maxEntries) return;
      if (entry.settledAt !== undefined) entries.delete(callId);
    }
    for (const callId of entries.keys()) {
      if (entries.size <= maxEntries) return;
      entries.delete(callId);
    }
  };

  return {
    run<T>(callId: string, fn: () => Promise<T>): Promise<T> {
      const existing = entries.get(callId);
      if (existing !== undefined) {
        entries.delete(callId);
        if (!expired(existing)) {
          entries.set(callId, existing);
          return existing.promise as Promise<T>;
        }
      }
      let promise: Promise<T>;
      try {
        promise = fn();
      } catch (error) {
        promise = Promise.reject(error);
      }
      const entry: Entry = { promise };
      const settle = () => {
        entry.settledAt = now();
      };
      promise.then(settle, settle);
      entries.set(callId, entry);
      evict();
      return promise;
    },
    get size() {
      return entries.size;
    },
  };
}

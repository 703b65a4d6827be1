/**
 * Duplicate call ids (a redelivered request, a client retry): a repeat of a call id that is in
 * flight, or that was answered less than `ttlMs` ago, gets the first call's promise instead of
 * running again — if it is the same call (`identity`, e.g. `callIdentity`). A call that failed is
 * forgotten once it settled. The call id reused for another call gets `reused()` instead: never
 * the first call's answer, and no run either.
 * Memory is bounded by `maxEntries`: finished entries go first, oldest first, and only then calls
 * still in flight (which keep running; only their memory is dropped). Expiry is checked lazily
 * against the injected clock, so no timers are involved.
 */
import { canonicalDigest, type ToolCallRequest } from "@toolbus/protocol";
import type { ParsedArguments } from "./tool-arguments.js";

export interface CallDeduperOptions {
  ttlMs: number;
  maxEntries: number;
  /** Milliseconds on any monotonic clock. */
  now: () => number;
}

export interface CallDeduper {
  /** `reused`: the answer to a call id remembered for a call of another identity. */
  run<T>(callId: string, identity: string, fn: () => Promise<T>, reused: () => T): Promise<T>;
  /**
   * What a call that settled is answered with from now on (e.g. where its large reply was
   * stored, instead of the reply): nothing when the id is not remembered for that call.
   */
  remember(callId: string, identity: string, value: unknown): void;
  /** Entries held now (in flight or remembered). */
  readonly size: number;
}

interface Entry {
  identity: string;
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
    run<T>(callId: string, identity: string, fn: () => Promise<T>, reused: () => T): Promise<T> {
      const existing = entries.get(callId);
      if (existing !== undefined && !expired(existing)) {
        // Another call under a remembered id is refused; the first call's memory stays as it was.
        if (existing.identity !== identity) return new Promise<T>((resolve) => resolve(reused()));
        entries.delete(callId);
        entries.set(callId, existing);
        return existing.promise as Promise<T>;
      }
      entries.delete(callId);
      let promise: Promise<T>;
      try {
        promise = fn();
      } catch (error) {
        promise = Promise.reject(error);
      }
      const entry: Entry = { identity, promise };
      const settle = () => {
        entry.settledAt = now();
      };
      // A call that failed (the ledger did not answer: "send it again") is forgotten once settled:
      // remembered, it refused every retry of its callId here for the whole TTL, after JetStream
      // was back. The cluster's call ledger still keeps a call that ran from running again.
      const forget = () => {
        if (entries.get(callId) === entry) entries.delete(callId);
      };
      promise.then(settle, forget);
      entries.set(callId, entry);
      evict();
      return promise;
    },
    remember(callId, identity, value) {
      const entry = entries.get(callId);
      if (entry?.identity !== identity || entry.settledAt === undefined) return;
      entry.promise = Promise.resolve(value);
    },
    get size() {
      return entries.size;
    },
  };
}

/**
 * What makes two requests with one call id the same call, as the caller sent them: the tool they
 * name (as named: a flat name and its `{namespace, name}` differ) and their arguments, parsed, so
 * key order and whitespace do not count. Unparseable arguments count by their text.
 */
export function callIdentity(tool: ToolCallRequest["tool"], parsed: ParsedArguments, text: string): string {
  switch (parsed.kind) {
    case "none":
      // Not `arguments: null`: the text `null` is another call (refused by the wire rule).
      return canonicalDigest({ tool });
    case "invalid_json":
      return canonicalDigest({ tool, unparsedArguments: text });
    case "object":
    case "not_object":
      return canonicalDigest({ tool, arguments: parsed.value });
  }
}

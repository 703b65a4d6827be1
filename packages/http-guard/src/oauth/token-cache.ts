/**
 * What was found out about a token, kept for a short while: a client sends the same access
 * token with every request of its session, and checking it again each time (a signature, an
 * introspection request) is most of what OAuth costs the edge. Keyed by the token's SHA-256
 * (the token itself is not kept), bounded in entries (the oldest goes first), and never kept
 * past the `until` it was stored with — the caller makes that no later than the token's `exp`.
 * Only good answers are stored: a bad token is checked again, and costs an attacker as much.
 */
import { createHash } from "node:crypto";

export class TokenCache<T> {
  readonly #entries = new Map<string, { value: T; until: number }>();
  readonly #maxEntries: number;

  constructor(maxEntries: number) {
    this.#maxEntries = maxEntries;
  }

  /** The value stored for `token` under `scope` (what else the answer depended on), while it holds. */
  get(token: string, scope: string, now = Date.now()): T | undefined {
    const key = keyOf(token, scope);
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.until > now) return entry.value;
    this.#entries.delete(key);
    return undefined;
  }

  set(token: string, scope: string, value: T, until: number, now = Date.now()): void {
    if (until <= now || this.#maxEntries <= 0) return;
    const key = keyOf(token, scope);
    this.#entries.delete(key);
    if (this.#entries.size >= this.#maxEntries) {
      // The oldest entry goes first (a Map keeps insertion order).
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    this.#entries.set(key, { value, until });
  }

  get size(): number {
    return this.#entries.size;
  }
}

function keyOf(token: string, scope: string): string {
  return `${createHash("sha256").update(token, "utf8").digest("base64url")} ${scope}`;
}

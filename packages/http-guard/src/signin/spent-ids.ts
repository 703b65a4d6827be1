/**
 * Ids that may not be used again, each until the moment its cookie would have expired anyway:
 * sessions that signed out, sign-in attempts that reached the callback once. Bounded in
 * entries: past the bound the oldest goes first (and is written to the log by the caller), so
 * a flood of sign-outs costs memory up to the bound and no more.
 */
export class SpentIds {
  readonly #until = new Map<string, number>();
  readonly #maxEntries: number;

  constructor(maxEntries: number) {
    this.#maxEntries = maxEntries;
  }

  has(id: string, now = Date.now()): boolean {
    const until = this.#until.get(id);
    if (until === undefined) return false;
    if (until > now) return true;
    this.#until.delete(id);
    return false;
  }

  /** Marks `id` spent until `until` (ms); returns whether an unexpired one had to go to make room. */
  add(id: string, until: number, now = Date.now()): { evicted: boolean } {
    if (until <= now || this.#maxEntries <= 0) return { evicted: false };
    this.#until.delete(id);
    let evicted = false;
    while (this.#until.size >= this.#maxEntries) {
      // The oldest entry goes first (a Map keeps insertion order); an expired one costs nothing.
      const [oldest, oldestUntil] = this.#until.entries().next().value as [string, number];
      this.#until.delete(oldest);
      if (oldestUntil > now) evicted = true;
    }
    this.#until.set(id, until);
    return { evicted };
  }

  get size(): number {
    return this.#until.size;
  }
}

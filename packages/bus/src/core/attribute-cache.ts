/**
 * One attribute object per combination of low-cardinality values (server, status, route…),
 * built once and handed out again, so recording a metric on a hot path allocates nothing. The
 * cache holds at most `limit` objects; past it, new combinations get a fresh object each time
 * (memory stays bounded even if a caller's values turn out not to be low-cardinality).
 */

type Key = string | number;

export class AttributeCache<A, K1 extends Key = string, K2 extends Key = string, K3 extends Key = string> {
  readonly #build: (first: K1, second: K2, third: K3) => A;
  readonly #limit: number;
  readonly #entries = new Map<K1, Map<K2, Map<K3, A>>>();
  #size = 0;

  /** `build` must return a new object; the cache never changes what it returned. */
  constructor(build: (first: K1, second: K2, third: K3) => A, limit = 1_000) {
    this.#build = build;
    this.#limit = limit;
  }

  /** Combinations cached so far. */
  get size(): number {
    return this.#size;
  }

  /** The attributes of (first, second, third); omitted keys are the empty string's place. */
  get(first: K1, second?: K2, third?: K3): A {
    const k2 = (second ?? "") as K2;
    const k3 = (third ?? "") as K3;
    let byFirst = this.#entries.get(first);
    const cached = byFirst?.get(k2)?.get(k3);
    if (cached !== undefined) return cached;
    const built = this.#build(first, k2, k3);
    if (this.#size >= this.#limit) return built;
    if (byFirst === undefined) {
      byFirst = new Map();
      this.#entries.set(first, byFirst);
    }
    let bySecond = byFirst.get(k2);
    if (bySecond === undefined) {
      bySecond = new Map();
      byFirst.set(k2, bySecond);
    }
    bySecond.set(k3, built);
    this.#size += 1;
    return built;
  }
}

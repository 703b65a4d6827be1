import { describe, expect, it } from "vitest";
import { TokenCache } from "../../src/oauth/token-cache.js";

describe("the cache of good tokens", () => {
  it("answers for a token only under the scope it was checked for, and only until its time", () => {
    const cache = new TokenCache<string>(10);
    cache.set("token-a", "http://h/mcp", "alice", 2_000, 1_000);
    expect([
      cache.get("token-a", "http://h/mcp", 1_999),
      cache.get("token-a", "http://h", 1_500),
      cache.get("token-b", "http://h/mcp", 1_500),
      cache.get("token-a", "http://h/mcp", 2_000),
    ]).toEqual(["alice", undefined, undefined, undefined]);
    // What ran out is gone, not kept.
    expect(cache.size).toBe(0);
  });

  it("keeps no more than its entries, the oldest going first, and nothing already out of time", () => {
    const cache = new TokenCache<number>(3);
    for (let i = 0; i < 5; i++) cache.set(`token-${i}`, "", i, 10_000, 0);
    cache.set("stale", "", 99, 5, 10);
    expect([0, 1, 2, 3, 4].map((i) => cache.get(`token-${i}`, "", 1))).toEqual([
      undefined,
      undefined,
      2,
      3,
      4,
    ]);
    expect(cache.get("stale", "", 1)).toBeUndefined();
  });
});

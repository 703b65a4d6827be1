import { describe, expect, it } from "vitest";
import { AttributeCache } from "../../src/core/attribute-cache.js";

describe("AttributeCache", () => {
  it("hands out the same object for the same values, and a different one per combination", () => {
    const cache = new AttributeCache((server: string, status: string) => ({ server, status }));
    const first = cache.get("a", "completed");
    expect(cache.get("a", "completed")).toBe(first);
    expect(first).toEqual({ server: "a", status: "completed" });
    expect(cache.get("a", "failed")).toEqual({ server: "a", status: "failed" });
    expect(cache.get("b", "completed")).toEqual({ server: "b", status: "completed" });
    expect(cache.size).toBe(3);
  });

  it("keys up to three values, numbers included, and treats omitted ones as empty", () => {
    const cache = new AttributeCache((route: string, method: string, status: number) => ({
      route,
      method,
      status,
    }));
    expect(cache.get("/mcp", "POST", 200)).toBe(cache.get("/mcp", "POST", 200));
    expect(cache.get("/mcp", "POST", 404)).toEqual({ route: "/mcp", method: "POST", status: 404 });
    const one = new AttributeCache((outcome: string) => ({ outcome }));
    expect(one.get("ok")).toBe(one.get("ok", ""));
  });

  it("stops caching at its limit, still answering correct attributes", () => {
    const cache = new AttributeCache((value: string) => ({ value }), 2);
    cache.get("a");
    cache.get("b");
    const overflow = cache.get("c");
    expect(overflow).toEqual({ value: "c" });
    expect(cache.get("c")).not.toBe(overflow);
    expect(cache.get("a")).toBe(cache.get("a"));
    expect(cache.size).toBe(2);
  });
});

// isolation(): prefixes must be single valid NATS tokens, usable as stream and bucket names, and unique.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isolation } from "../src/isolation.js";

describe("isolation", () => {
  it("makes a short lower-case token from any name", () => {
    fc.assert(
      fc.property(fc.option(fc.string(), { nil: undefined }), (name) => {
        const { prefix } = isolation(name);
        expect(prefix).toMatch(/^t_([a-z0-9]+(_[a-z0-9]+)*_)?[a-z0-9]{10}$/);
        expect(prefix.length).toBeLessThanOrEqual(29);
      }),
    );
  });

  it("keeps a readable name in the prefix", () => {
    expect(isolation("Catalog refresh!").prefix).toMatch(/^t_catalog_refresh_[a-z0-9]{10}$/);
  });

  it("never repeats a prefix", () => {
    const prefixes = Array.from({ length: 10_000 }, () => isolation().prefix);
    expect(new Set(prefixes).size).toBe(prefixes.length);
  });
});

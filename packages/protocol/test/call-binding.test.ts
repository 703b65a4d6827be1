import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type ApprovalBinding, approvalCallDigest, callIdReusedMessage } from "../src/call-binding.js";
import { canonicalJson } from "../src/naming/index.js";
import type { JsonValue } from "../src/schemas/primitives.js";

const FINGERPRINT = "0f".repeat(32);

const bindingArb: fc.Arbitrary<ApprovalBinding> = fc.record({
  server: fc.string({ maxLength: 12 }),
  tool: fc.string({ maxLength: 12 }),
  fingerprint: fc.oneof(fc.constant(FINGERPRINT), fc.stringMatching(/^[0-9a-f]{64}$/)),
  arguments: fc.jsonValue({ maxDepth: 4 }) as fc.Arbitrary<JsonValue>,
});

/** The same JSON with every object's keys in another order (reversed, then rotated by `turn`). */
function reordered(value: JsonValue, turn: number): JsonValue {
  if (Array.isArray(value)) return value.map((item) => reordered(item, turn));
  if (value === null || typeof value !== "object") return value;
  const keys = Object.keys(value).reverse();
  const shift = keys.length === 0 ? 0 : turn % keys.length;
  const order = [...keys.slice(shift), ...keys.slice(0, shift)];
  return Object.fromEntries(order.map((key) => [key, reordered(value[key] as JsonValue, turn)]));
}

const sameJson = (a: JsonValue, b: JsonValue) => canonicalJson(a) === canonicalJson(b);

describe("approvalCallDigest", () => {
  it("is the hex SHA-256 of the canonical JSON of server, tool, fingerprint and arguments", () => {
    const binding = {
      server: "docs",
      tool: "search",
      fingerprint: FINGERPRINT,
      arguments: { q: "x", a: [1] },
    };
    const canonical = `{"arguments":{"a":[1],"q":"x"},"fingerprint":"${FINGERPRINT}","server":"docs","tool":"search"}`;
    expect(approvalCallDigest(binding)).toBe(createHash("sha256").update(canonical).digest("hex"));
  });

  it("does not depend on the order of keys in the arguments, at any depth", () => {
    fc.assert(
      fc.property(bindingArb, fc.nat(), (binding, turn) => {
        const shuffled = { ...binding, arguments: reordered(binding.arguments, turn) };
        expect(approvalCallDigest(shuffled)).toBe(approvalCallDigest(binding));
      }),
    );
  });

  it("changes when the server, the tool, the fingerprint or the arguments change", () => {
    fc.assert(
      fc.property(
        bindingArb,
        bindingArb,
        fc.constantFrom("server", "tool", "fingerprint", "arguments"),
        (binding, other, field) => {
          const changed = { ...binding, [field]: other[field] };
          fc.pre(
            field === "arguments"
              ? !sameJson(binding.arguments, other.arguments)
              : binding[field] !== other[field],
          );
          expect(approvalCallDigest(changed)).not.toBe(approvalCallDigest(binding));
        },
      ),
    );
  });

  it("tells no arguments (null) from an empty object, and a value from its text", () => {
    const call = { server: "docs", tool: "search", fingerprint: FINGERPRINT };
    const values: JsonValue[] = [null, {}, { n: 1 }, { n: "1" }, '{"n":1}'];
    const digests = values.map((args) => approvalCallDigest({ ...call, arguments: args }));
    expect(new Set(digests).size).toBe(digests.length);
  });

  it("cannot be matched by moving text between fields", () => {
    const a = approvalCallDigest({ server: "ab", tool: "c", fingerprint: FINGERPRINT, arguments: null });
    const b = approvalCallDigest({ server: "a", tool: "bc", fingerprint: FINGERPRINT, arguments: null });
    expect(a).not.toBe(b);
  });
});

describe("callIdReusedMessage", () => {
  it("names the callId, says the call did not run, and asks for a new callId", () => {
    expect(callIdReusedMessage("call-7")).toBe(
      'callId "call-7" was already used for a different tool call (another server, tool, tool version or arguments), so this call did not run; send it with a new callId',
    );
  });
});

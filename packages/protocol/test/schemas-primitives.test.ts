import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  APPROVAL_REQUEST_ID_PREFIX,
  ApprovalRequestIdSchema,
  approvalRequestId,
  cappedString,
  DEFAULT_MODEL_TRUNCATION,
  IdSchema,
  MAX_ID_LENGTH,
  ServerNameSchema,
  TimestampSchema,
  TruncationPolicySchema,
  utf8ByteLength,
} from "../src/schemas/index.js";
import { parseWith } from "../src/validation.js";

const anyUtf16 = fc.oneof(
  fc.string({ unit: "binary" }),
  // Surrogate halves on their own, and around them, where byte counting is easiest to get wrong.
  fc.string({ unit: fc.integer({ min: 0xd700, max: 0xe100 }).map((unit) => String.fromCharCode(unit)) }),
);

describe("utf8ByteLength", () => {
  it("counts the bytes TextEncoder writes, lone surrogates included", () => {
    fc.assert(
      fc.property(anyUtf16, (text) => {
        expect(utf8ByteLength(text)).toBe(new TextEncoder().encode(text).length);
      }),
    );
  });
});

describe("a capped string", () => {
  const cap = cappedString(8);
  const over = "Too big: expected string to have <=8 bytes";

  it.each([
    ["8 ASCII bytes", "abcdefgh", true],
    ["9 ASCII bytes", "abcdefghi", false],
    ["4 two-byte characters (8 bytes)", "éééé", true],
    ["5 two-byte characters (10 bytes in 5 characters)", "ééééé", false],
    ["2 emoji (8 bytes in 4 UTF-16 units)", "😀😀", true],
    ["3 emoji (12 bytes in 6 UTF-16 units)", "😀😀😀", false],
  ])("with %s is accepted: %s", (_name, text, accepted) => {
    expect(parseWith(cap, text)).toStrictEqual(
      accepted ? { ok: true, value: text } : { ok: false, message: over },
    );
  });

  it("accepts exactly when the UTF-8 length is within the cap", () => {
    fc.assert(
      fc.property(anyUtf16, fc.integer({ min: 0, max: 40 }), (text, max) => {
        const accepted = parseWith(cappedString(max), text).ok;
        expect(accepted).toBe(new TextEncoder().encode(text).length <= max);
      }),
    );
  });
});

describe("identifiers", () => {
  it.each([
    ["a one-character id", "a", true],
    ["a 256-character id", "i".repeat(MAX_ID_LENGTH), true],
    ["an empty id", "", false],
    ["a 257-character id", "i".repeat(MAX_ID_LENGTH + 1), false],
  ])("%s is accepted: %s", (_name, id, accepted) => {
    expect(parseWith(IdSchema, id).ok).toBe(accepted);
  });

  it.each([
    ["github", true],
    ["my-server_2", true],
    ["s".repeat(128), true],
    ["s".repeat(129), false],
    ["bad name", false],
    ["server.one", false],
    ["", false],
    ["ünïcode", false],
  ])("server name %j is accepted: %s", (name, accepted) => {
    expect(parseWith(ServerNameSchema, name).ok).toBe(accepted);
  });

  it("derives an approval request id from the call id, and accepts it even for the longest call id", () => {
    const longest = "c".repeat(MAX_ID_LENGTH);
    expect(approvalRequestId("call_1")).toBe("mcp_tool_call_approval_call_1");
    expect(parseWith(ApprovalRequestIdSchema, approvalRequestId(longest))).toStrictEqual({
      ok: true,
      value: `${APPROVAL_REQUEST_ID_PREFIX}${longest}`,
    });
  });
});

describe("timestamps", () => {
  it.each([
    ["2026-11-30T05:20:28Z", true],
    ["2026-11-30T05:20:28.123Z", true],
    ["2026-11-30T06:20:28+01:00", true],
    ["2026-11-30", false],
    ["1796000000", false],
  ])("%s is accepted: %s", (at, accepted) => {
    expect(parseWith(TimestampSchema, at).ok).toBe(accepted);
  });
});

describe("defaults the services apply", () => {
  it("truncates model output to 10000 bytes unless the request says otherwise", () => {
    expect(DEFAULT_MODEL_TRUNCATION).toStrictEqual({ mode: "bytes", limit: 10_000 });
    expect(Object.isFrozen(DEFAULT_MODEL_TRUNCATION)).toBe(true);
    expect(parseWith(TruncationPolicySchema, DEFAULT_MODEL_TRUNCATION).ok).toBe(true);
  });
});

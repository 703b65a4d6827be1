import { describe, expect, it } from "vitest";
import { parkedError, payloadPreview, storableText } from "../../src/core/parked-message.js";

describe("parked message text", () => {
  it("replaces NUL, which Postgres text cannot hold, with U+FFFD", () => {
    expect(storableText("a\u0000b\u0000")).toBe("a\uFFFDb\uFFFD");
  });

  it("keeps a short error and cuts a long one at 4,000 characters", () => {
    expect(parkedError("boom")).toBe("boom");
    const cut = parkedError("x".repeat(5_000));
    expect({ length: cut.length, end: cut.slice(-2) }).toEqual({ length: 4_000, end: "x…" });
  });

  it("previews at most 1,000 characters of a payload", () => {
    expect(payloadPreview("short")).toBe("short");
    expect(payloadPreview("y".repeat(1_001))).toBe(`${"y".repeat(1_000)}…`);
  });
});

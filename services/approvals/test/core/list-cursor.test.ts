import { describe, expect, it } from "vitest";
import { decodeListCursor, encodeListCursor } from "../../src/core/list-cursor.js";

describe("the approvals list cursor", () => {
  it("gives back the position it was made from", () => {
    const position = { createdAt: "2026-12-01T10:00:00.000Z", requestId: "mcp_tool_call_approval_c-1" };
    expect(decodeListCursor(encodeListCursor(position))).toEqual(position);
  });

  it.each([
    ["not base64 JSON", "not-a-cursor"],
    ["JSON of another shape", Buffer.from(JSON.stringify({ a: 1 })).toString("base64url")],
    ["a date that is not one", Buffer.from(JSON.stringify(["yesterday", "r"])).toString("base64url")],
    [
      "an id that is not a string",
      Buffer.from(JSON.stringify(["2026-12-01T10:00:00Z", 7])).toString("base64url"),
    ],
  ])("refuses %s", (_case, cursor) => {
    expect(decodeListCursor(cursor)).toBeUndefined();
  });
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { displayWidth, formatNumber, oneLine, truncateToWidth } from "../../src/core/text.js";

describe("displayWidth", () => {
  it.each([
    ["abc", 3],
    ["", 0],
    ["日本語", 6],
    ["e\u0301", 1],
    ["🙂x", 3],
  ])("%j takes %i columns", (text, width) => {
    expect(displayWidth(text)).toBe(width);
  });
});

describe("truncateToWidth", () => {
  it.each([
    ["hello", 10, "hello"],
    ["hello", 5, "hello"],
    ["hello world", 8, "hello w…"],
    ["hello", 1, "…"],
    ["hello", 0, ""],
    ["日本語テキスト", 7, "日本語…"],
  ])("cuts %j to %i columns as %j", (text, width, expected) => {
    expect(truncateToWidth(text, width)).toBe(expected);
  });

  it("never exceeds the width and keeps a prefix of the text", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), fc.nat(40), (text, width) => {
        const cut = truncateToWidth(text, width);
        const kept = cut.endsWith("…") && cut !== text ? cut.slice(0, -1) : cut;
        return displayWidth(cut) <= Math.max(width, 0) && text.startsWith(kept);
      }),
    );
  });
});

describe("oneLine", () => {
  it("flattens whitespace and removes control characters, escape sequences included", () => {
    expect(oneLine("  first line\n\tsecond\u001b[31m red\u0007  ")).toBe("first line second[31m red");
  });
});

describe("formatNumber", () => {
  it.each([
    [3, "3"],
    [2.5, "2.5"],
    [1 / 3, "0.33"],
  ])("%d reads as %s", (n, text) => {
    expect(formatNumber(n)).toBe(text);
  });
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  scalePolicy,
  splitAtCharBoundaries,
  truncateMiddleChars,
  truncateMiddleTokens,
  truncateText,
  utf8Length,
} from "../../src/core/truncate.js";

const LONG = "this is an example of a long output that should be truncated";
const TWO_LINES = `${LONG}\nalso some other line`;
const EMOJI = "😀😀😀😀😀😀😀😀😀😀\nsecond line with text\n";

describe("utf8Length", () => {
  it.each([
    ["", 0],
    ["abc", 3],
    ["é", 2],
    ["€", 3],
    ["😀", 4],
    ["\ud800", 3],
    ["a\udc00b", 5],
  ])("%j is %i bytes", (text, bytes) => {
    expect(utf8Length(text)).toBe(bytes);
  });

  it("agrees with TextEncoder on any string", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 200 }), (text) => {
        expect(utf8Length(text)).toBe(new TextEncoder().encode(text).length);
      }),
    );
  });
});

describe("splitAtCharBoundaries", () => {
  it.each([
    {
      text: "hello world",
      prefix: 5,
      suffix: 5,
      split: { prefix: "hello", suffix: "world", removedChars: 1 },
    },
    { text: "abc", prefix: 0, suffix: 0, split: { prefix: "", suffix: "", removedChars: 3 } },
    { text: "", prefix: 4, suffix: 4, split: { prefix: "", suffix: "", removedChars: 0 } },
    { text: "abcdef", prefix: 3, suffix: 0, split: { prefix: "abc", suffix: "", removedChars: 3 } },
    { text: "abcdef", prefix: 0, suffix: 3, split: { prefix: "", suffix: "def", removedChars: 3 } },
    { text: "abcdef", prefix: 4, suffix: 4, split: { prefix: "abcd", suffix: "ef", removedChars: 0 } },
    { text: "😀abc😀", prefix: 5, suffix: 5, split: { prefix: "😀a", suffix: "c😀", removedChars: 1 } },
    { text: "😀😀😀😀😀", prefix: 1, suffix: 1, split: { prefix: "", suffix: "", removedChars: 5 } },
    { text: "😀😀😀😀😀", prefix: 7, suffix: 7, split: { prefix: "😀", suffix: "😀", removedChars: 3 } },
    { text: "😀😀😀😀😀", prefix: 8, suffix: 8, split: { prefix: "😀😀", suffix: "😀😀", removedChars: 1 } },
  ])("splits $text at $prefix/$suffix bytes", ({ text, prefix, suffix, split }) => {
    expect(splitAtCharBoundaries(text, prefix, suffix)).toEqual(split);
  });
});

describe("middle truncation", () => {
  it.each([
    {
      name: "text under a byte budget is unchanged",
      text: "example output",
      policy: { mode: "bytes", limit: 20 },
      out: "example output",
    },
    {
      name: "text under a token budget is unchanged",
      text: "example output",
      policy: { mode: "tokens", limit: 10 },
      out: "example output",
    },
    {
      name: "a 1-byte budget keeps only the last byte",
      text: "example output",
      policy: { mode: "bytes", limit: 1 },
      out: "…13 chars truncated…t",
    },
    {
      name: "a 1-token budget keeps 2 + 2 bytes",
      text: "example output",
      policy: { mode: "tokens", limit: 1 },
      out: "ex…3 tokens truncated…ut",
    },
    {
      name: "bytes mode counts removed characters",
      text: LONG,
      policy: { mode: "bytes", limit: 30 },
      out: "this is an exam…30 chars truncated…ld be truncated",
    },
    {
      name: "tokens mode counts removed tokens",
      text: LONG,
      policy: { mode: "tokens", limit: 5 },
      out: "this is an…10 tokens truncated… truncated",
    },
    {
      name: "newlines are ordinary characters (bytes)",
      text: TWO_LINES,
      policy: { mode: "bytes", limit: 30 },
      out: "this is an exam…51 chars truncated…some other line",
    },
    {
      name: "newlines are ordinary characters (tokens)",
      text: TWO_LINES,
      policy: { mode: "tokens", limit: 10 },
      out: "this is an example o…11 tokens truncated…also some other line",
    },
    {
      name: "bytes mode cuts on character boundaries",
      text: EMOJI,
      policy: { mode: "bytes", limit: 20 },
      out: "😀😀…21 chars truncated…with text\n",
    },
    {
      name: "tokens mode cuts on character boundaries",
      text: EMOJI,
      policy: { mode: "tokens", limit: 8 },
      out: "😀😀😀😀…8 tokens truncated… line with text\n",
    },
    {
      name: "a zero token budget leaves only the marker",
      text: "abcdef",
      policy: { mode: "tokens", limit: 0 },
      out: "…2 tokens truncated…",
    },
    {
      name: "a zero byte budget leaves only the marker",
      text: "abcdef",
      policy: { mode: "bytes", limit: 0 },
      out: "…6 chars truncated…",
    },
    { name: "empty text stays empty", text: "", policy: { mode: "bytes", limit: 0 }, out: "" },
  ] as const)("$name", ({ text, policy, out }) => {
    expect(truncateText(text, policy)).toBe(out);
  });

  it.each([
    [
      { mode: "bytes", limit: 10_000 },
      { mode: "bytes", limit: 12_000 },
    ],
    [
      { mode: "tokens", limit: 5 },
      { mode: "tokens", limit: 6 },
    ],
    [
      { mode: "bytes", limit: 11 },
      { mode: "bytes", limit: 14 },
    ],
  ] as const)("the model budget %j × 1.2 rounds up to %j", (policy, scaled) => {
    expect(scalePolicy(policy, 1.2)).toEqual(scaled);
  });
});

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const codePoints = (text: string) => [...text].length;

/** Every way to read `out` as prefix + marker + suffix with the marker pattern given. */
function decompositions(
  out: string,
  marker: RegExp,
): Array<{ prefix: string; count: number; suffix: string }> {
  return [...out.matchAll(new RegExp(marker, "g"))].map((match) => ({
    prefix: out.slice(0, match.index),
    count: Number(match[1]),
    suffix: out.slice(match.index + match[0].length),
  }));
}

describe("middle truncation properties", () => {
  const text = fc.string({ unit: "binary", maxLength: 300 });
  const budget = fc.integer({ min: 0, max: 400 });

  it("bytes mode: within budget plus marker, prefix and suffix of the input, whole characters", () => {
    fc.assert(
      fc.property(text, budget, (input, maxBytes) => {
        const out = truncateMiddleChars(input, maxBytes);
        if (input === "" || (maxBytes > 0 && utf8Length(input) <= maxBytes)) {
          expect(out).toBe(input);
          return;
        }
        const half = Math.floor(maxBytes / 2);
        const fits = decompositions(out, /…(\d+) chars truncated…/).some(
          ({ prefix, count, suffix }) =>
            input.startsWith(prefix) &&
            input.endsWith(suffix) &&
            utf8Length(prefix) <= half &&
            utf8Length(suffix) <= maxBytes - half &&
            !LONE_SURROGATE.test(prefix) &&
            !LONE_SURROGATE.test(suffix) &&
            count === codePoints(input) - codePoints(prefix) - codePoints(suffix),
        );
        expect(fits).toBe(true);
      }),
    );
  });

  it("tokens mode: within 4 bytes a token plus marker, counting ⌈overflow/4⌉ tokens", () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 0, max: 100 }), (input, maxTokens) => {
        const out = truncateMiddleTokens(input, maxTokens);
        const maxBytes = maxTokens * 4;
        if (input === "" || (maxTokens > 0 && utf8Length(input) <= maxBytes)) {
          expect(out).toBe(input);
          return;
        }
        const half = Math.floor(maxBytes / 2);
        const fits = decompositions(out, /…(\d+) tokens truncated…/).some(
          ({ prefix, count, suffix }) =>
            input.startsWith(prefix) &&
            input.endsWith(suffix) &&
            utf8Length(prefix) <= half &&
            utf8Length(suffix) <= maxBytes - half &&
            !LONE_SURROGATE.test(prefix) &&
            !LONE_SURROGATE.test(suffix) &&
            count === Math.ceil((utf8Length(input) - maxBytes) / 4),
        );
        expect(fits).toBe(true);
      }),
    );
  });

  it("keeps as much as the budget allows: one more character would not fit", () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 400 }), (input, maxBytes) => {
        fc.pre(utf8Length(input) > maxBytes);
        const half = Math.floor(maxBytes / 2);
        const { prefix, suffix } = splitAtCharBoundaries(input, half, maxBytes - half);
        const nextChar = [...input.slice(prefix.length)][0] ?? "";
        const previousChar = [...input.slice(0, input.length - suffix.length)].at(-1) ?? "";
        const grownPrefix =
          utf8Length(prefix + nextChar) > half || prefix.length + suffix.length >= input.length;
        const grownSuffix =
          utf8Length(previousChar + suffix) > maxBytes - half ||
          prefix.length + suffix.length >= input.length;
        expect({ grownPrefix, grownSuffix }).toEqual({ grownPrefix: true, grownSuffix: true });
      }),
    );
  });
});

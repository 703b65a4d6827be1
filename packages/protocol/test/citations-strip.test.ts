import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { stripCitations, stripProposedPlanBlocks } from "../src/citations/index.js";
import { CLOSE, cutAt, FORMAT_BODY, OPEN, span, streamThrough } from "./citations-support.js";

const ROLLOUT = "019cc2ea-1dff-7902-8d40-c8f6e5d83cc4";

describe("stripCitations", () => {
  it("[54] strips the citation to `hello world` and parses it (stream_events_utils)", () => {
    const text = `hello${OPEN}<citation_entries>\nMEMORY.md:1-2|note=[x]\n</citation_entries>\n<rollout_ids>\n${ROLLOUT}\n</rollout_ids>${CLOSE} world`;
    expect(stripCitations(text)).toEqual({
      visibleText: "hello world",
      citation: {
        entries: [{ path: "MEMORY.md", lineStart: 1, lineEnd: 2, note: "x" }],
        rolloutIds: [ROLLOUT],
      },
    });
  });

  it("[55] hides and parses a citation left unterminated at the end", () => {
    expect(stripCitations(`answer\n${OPEN}${FORMAT_BODY}`)).toEqual({
      visibleText: "answer\n",
      citation: {
        entries: [
          { path: "MEMORY.md", lineStart: 234, lineEnd: 236, note: "short note" },
          {
            path: "rollout_summaries/2026-02-17T21-23-02-LN3m-example.md",
            lineStart: 10,
            lineEnd: 12,
            note: "weekly report format",
          },
        ],
        rolloutIds: ["019c6e27-e55b-73d1-87d8-4e01f1f75043"],
      },
    });
  });

  it("hides a span with nothing parseable in it and reports no citation", () => {
    expect(stripCitations(`a${span("doc1")}b`)).toEqual({ visibleText: "ab", citation: null });
  });

  it("leaves <proposed_plan> blocks alone outside plan mode", () => {
    const text = "before\n<proposed_plan>\n- x\n</proposed_plan>\nafter";
    expect(stripCitations(text)).toEqual({ visibleText: text, citation: null });
  });

  it("strips citations and plan blocks in plan mode (stream_events_utils: `before\\nafter`)", () => {
    const text = `before${span("doc1")}\n<proposed_plan>\n- x\n</proposed_plan>\nafter`;
    expect(stripCitations(text, { planMode: true })).toEqual({
      visibleText: "before\nafter",
      citation: null,
    });
  });

  it("gives the same result as streaming the text in any chunks", () => {
    const fragment = fc.constantFrom(
      OPEN,
      CLOSE,
      "<oai-mem-",
      "<rollout_ids>\n",
      `${ROLLOUT}\n`,
      "</rollout_ids>",
      "a",
      "\n",
    );
    fc.assert(
      fc.property(
        fc.array(fragment, { maxLength: 20 }),
        fc.array(fc.nat(), { maxLength: 5 }),
        (parts, rawCuts) => {
          const text = parts.join("");
          const cuts = rawCuts.map((cut) => cut % (text.length + 1)).sort((a, b) => a - b);
          const streamed = streamThrough(cutAt(text, cuts));
          expect(stripCitations(text).visibleText).toBe(streamed.visible);
        },
      ),
    );
  });

  it("never throws and never makes the text longer, whatever the text", () => {
    const text = fc.oneof(
      fc.string({ unit: "grapheme" }),
      fc.array(fc.constantFrom(OPEN, CLOSE, "<proposed_plan>", "\n", "x")).map((parts) => parts.join("")),
    );
    fc.assert(
      fc.property(text, fc.boolean(), (input, planMode) => {
        expect(stripCitations(input, { planMode }).visibleText.length).toBeLessThanOrEqual(input.length);
      }),
    );
  });
});

describe("stripProposedPlanBlocks", () => {
  it.each([
    {
      name: "removes a block between text",
      text: "before\n<proposed_plan>\n- step\n</proposed_plan>\nafter",
      visible: "before\nafter",
    },
    {
      name: "accepts whitespace around the tag lines",
      text: "a\n  <proposed_plan>\t\n- s\n </proposed_plan>  \r\nb",
      visible: "a\nb",
    },
    {
      name: "keeps a tag line with other text on it",
      text: "  <proposed_plan> extra\n",
      visible: "  <proposed_plan> extra\n",
    },
    {
      name: "keeps an inline tag",
      text: "see <proposed_plan>x</proposed_plan> here",
      visible: "see <proposed_plan>x</proposed_plan> here",
    },
    {
      name: "drops the rest after a block that is never closed",
      text: "a\n<proposed_plan>\n- step 1\n",
      visible: "a\n",
    },
    {
      name: "keeps a close tag without an open one",
      text: "a\n</proposed_plan>\nb",
      visible: "a\n</proposed_plan>\nb",
    },
    {
      name: "treats a second open tag inside a block as plan text",
      text: "<proposed_plan>\n<proposed_plan>\nx\n</proposed_plan>\ny",
      visible: "y",
    },
    {
      name: "removes a block whose close tag ends the text",
      text: "a\n<proposed_plan>\nx\n</proposed_plan>",
      visible: "a\n",
    },
  ])("$name", ({ text, visible }) => {
    expect(stripProposedPlanBlocks(text)).toBe(visible);
  });
});

describe("a citation-only reply", () => {
  it("[59] has no visible text left, yet its citation is returned, so the turn is flagged as cited", () => {
    const text = span(`<rollout_ids>\n${ROLLOUT}\n</rollout_ids>`);
    expect(stripCitations(text)).toEqual({
      visibleText: "",
      citation: { entries: [], rolloutIds: [ROLLOUT] },
    });
  });
});

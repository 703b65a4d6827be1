import { describe, expect, it } from "vitest";
import { createCitationStripper, parseCitationBodies, stripCitations } from "../src/citations/index.js";
import { CLOSE, OPEN, span } from "./citations-support.js";

// Hostile sizes must stay linear: each case costs tens of ms, while quadratic work would take
// minutes and outlast the test timeout. Speed itself is measured in `pnpm bench`, not here.
const TEN_MB = 10 * 1024 * 1024;

function repeatTo(unit: string, length: number): string {
  return unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
}

function streamInChunks(text: string, size: number): { visibleLength: number; bodies: readonly string[] } {
  const stripper = createCitationStripper();
  let visibleLength = 0;
  for (let at = 0; at < text.length; at += size)
    visibleLength += stripper.push(text.slice(at, at + size)).length;
  visibleLength += stripper.finish().length;
  return { visibleLength, bodies: stripper.bodies };
}

describe("citation limits", () => {
  it("strips a 10 MB reply with a citation at the end", () => {
    const prose = repeatTo("lorem ipsum < dolor > sit </ amet\n", TEN_MB);
    const body = "<rollout_ids>\n019c6e27-e55b-73d1-87d8-4e01f1f75043\n</rollout_ids>";
    const result = stripCitations(prose + span(body));
    expect({ visibleLength: result.visibleText.length, rolloutIds: result.citation?.rolloutIds }).toEqual({
      visibleLength: prose.length,
      rolloutIds: ["019c6e27-e55b-73d1-87d8-4e01f1f75043"],
    });
  });

  it.each([
    { size: "10 MB", length: TEN_MB, chunk: 4096 },
    { size: "1 MB", length: TEN_MB / 10, chunk: 7 },
  ])("streams $size of near-miss open tags in $chunk-character chunks", ({ length, chunk }) => {
    const text = repeatTo("<oai-mem-citatio", length);
    const result = streamInChunks(text, chunk);
    expect({ visibleLength: result.visibleLength, bodies: result.bodies.length }).toEqual({
      visibleLength: text.length,
      bodies: 0,
    });
  });

  it.each([
    { size: "10 MB", length: TEN_MB, chunk: 4096 },
    { size: "1 MB", length: TEN_MB / 10, chunk: 7 },
  ])(
    "streams an unterminated $size span of near-miss close tags in $chunk-character chunks",
    ({ length, chunk }) => {
      const inner = repeatTo("</oai-mem-citatio", length);
      const result = streamInChunks(OPEN + inner, chunk);
      expect({
        visibleLength: result.visibleLength,
        bodyLengths: result.bodies.map((b) => b.length),
      }).toEqual({
        visibleLength: 0,
        bodyLengths: [inner.length],
      });
    },
  );

  it("strips 10 MB made of tiny spans", () => {
    const unit = `a${span("b")}`;
    const count = Math.floor(TEN_MB / unit.length);
    const result = stripCitations(unit.repeat(count));
    expect({ visibleLength: result.visibleText.length, citation: result.citation }).toEqual({
      visibleLength: count,
      citation: null,
    });
  });

  it("parses a span with 100,000 entries", () => {
    const lines = Array.from(
      { length: 100_000 },
      (_, index) => `notes/${index}.md:${index}-${index + 1}|note=[n${index}]`,
    );
    const text = `answer${OPEN}<citation_entries>\n${lines.join("\n")}\n</citation_entries>${CLOSE}`;
    const result = stripCitations(text);
    const entries = result.citation?.entries ?? [];
    expect({ count: entries.length, first: entries[0], last: entries.at(-1) }).toEqual({
      count: 100_000,
      first: { path: "notes/0.md", lineStart: 0, lineEnd: 1, note: "n0" },
      last: { path: "notes/99999.md", lineStart: 99_999, lineEnd: 100_000, note: "n99999" },
    });
  });

  it("skips 100,000 lines past u32 and 100,000 repeated ids", () => {
    const lines = Array.from({ length: 100_000 }, (_, index) => `a.md:${4_294_967_296 + index}-1|note=[x]`);
    const ids = Array.from({ length: 100_000 }, (_, index) => `id-${index % 10}`);
    const body = `<citation_entries>\n${lines.join("\n")}\n</citation_entries>\n<rollout_ids>\n${ids.join("\n")}\n</rollout_ids>`;
    const result = parseCitationBodies([body]);
    expect(result).toEqual({
      entries: [],
      rolloutIds: Array.from({ length: 10 }, (_, index) => `id-${index}`),
    });
  });

  it("parses one 10 MB entry line full of markers and colons", () => {
    const line = `${repeatTo("|note=[:-:", TEN_MB)}deep.md:1-2|note=[end]`;
    const result = parseCitationBodies([`<citation_entries>\n${line}\n</citation_entries>`]);
    expect(result?.entries.map(({ lineStart, lineEnd, note }) => ({ lineStart, lineEnd, note }))).toEqual([
      { lineStart: 1, lineEnd: 2, note: "end" },
    ]);
  });
});

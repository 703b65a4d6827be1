import { describe, expect, it } from "vitest";
import { strip } from "../../src/handlers/strip.js";
import { A, answer } from "../citations.js";

describe("strip", () => {
  it("hides the citation and returns what it cited", () => {
    expect(strip({ text: answer([A, "not-a-uuid", A]) })).toEqual({
      visibleText: "Here is the answer.\n",
      citation: {
        entries: [{ path: "MEMORY.md", lineStart: 1, lineEnd: 2, note: "x" }],
        rolloutIds: [A, "not-a-uuid"],
      },
    });
  });

  it("hides <proposed_plan> blocks only in plan mode", () => {
    const text = "intro\n<proposed_plan>\nstep 1\n</proposed_plan>\nend";
    expect([strip({ text, planMode: true }), strip({ text })]).toEqual([
      { visibleText: "intro\nend", citation: null },
      { visibleText: text, citation: null },
    ]);
  });

  it("skips entries whose line numbers do not fit in a u32", () => {
    const text = [
      "<oai-mem-citation><citation_entries>",
      "MEMORY.md:1-4294967296|note=[too far]",
      "MEMORY.md:99999999999999999999-1|note=[way too far]",
      "MEMORY.md:4294967295-4294967295|note=[last line]",
      "</citation_entries></oai-mem-citation>",
    ].join("\n");
    expect(strip({ text })).toEqual({
      visibleText: "",
      citation: {
        entries: [{ path: "MEMORY.md", lineStart: 4_294_967_295, lineEnd: 4_294_967_295, note: "last line" }],
        rolloutIds: [],
      },
    });
  });

  it("parses a span with 100,000 entries", () => {
    const lines = Array.from({ length: 100_000 }, (_, i) => `notes/${i}.md:${i}-${i + 1}|note=[n${i}]`);
    const text = `answer<oai-mem-citation><citation_entries>\n${lines.join("\n")}\n</citation_entries></oai-mem-citation>`;
    const result = strip({ text });
    expect({
      visibleText: result.visibleText,
      entries: result.citation?.entries.length,
      last: result.citation?.entries.at(-1),
    }).toEqual({
      visibleText: "answer",
      entries: 100_000,
      last: { path: "notes/99999.md", lineStart: 99_999, lineEnd: 100_000, note: "n99999" },
    });
  });
});

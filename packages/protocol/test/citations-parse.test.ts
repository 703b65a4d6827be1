import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type MemoryCitationEntry,
  MemoryCitationSchema,
  parseCitationBodies,
} from "../src/citations/index.js";
import { FORMAT_BODY } from "./citations-support.js";

const ID_A = "019c6e27-e55b-73d1-87d8-4e01f1f75043";
const ID_B = "019c7714-3b77-74d1-9866-e1f484aae2ab";

function entriesBody(...lines: string[]): string {
  return `<citation_entries>\n${lines.join("\n")}\n</citation_entries>`;
}

function entry(path: string, lineStart: number, lineEnd: number, note: string): MemoryCitationEntry {
  return { path, lineStart, lineEnd, note };
}

// One entry line per row: what it parses to, or null when the line is skipped (docs/reference-behavior.md §9 steps 1–6).
const entryLines: { name: string; line: string; parsed: MemoryCitationEntry | null }[] = [
  { name: "a plain entry", line: "MEMORY.md:1-2|note=[x]", parsed: entry("MEMORY.md", 1, 2, "x") },
  {
    name: "spaces around every part, trimmed away",
    line: "   MEMORY.md : 1 - 2 |note=[  a short note  ]  ",
    parsed: entry("MEMORY.md", 1, 2, "a short note"),
  },
  {
    name: "a path holding `|note=[` (the last marker splits)",
    line: "odd|note=[name.md:3-4|note=[n]",
    parsed: entry("odd|note=[name.md", 3, 4, "n"),
  },
  {
    name: "a path holding colons (the last colon splits)",
    line: "C:\\memories\\MEMORY.md:5-6|note=[windows]",
    parsed: entry("C:\\memories\\MEMORY.md", 5, 6, "windows"),
  },
  {
    name: "a path holding dashes",
    line: "rollout-summaries/a-b.md:7-8|note=[x]",
    parsed: entry("rollout-summaries/a-b.md", 7, 8, "x"),
  },
  {
    name: "a note holding brackets",
    line: "a.md:1-2|note=[[x] and [y]]",
    parsed: entry("a.md", 1, 2, "[x] and [y]"),
  },
  { name: "an empty note", line: "a.md:1-2|note=[]", parsed: entry("a.md", 1, 2, "") },
  { name: "an empty path", line: ":1-2|note=[x]", parsed: entry("", 1, 2, "x") },
  {
    name: "line numbers with a plus sign and leading zeros",
    line: "a.md:+7-0009|note=[x]",
    parsed: entry("a.md", 7, 9, "x"),
  },
  {
    name: "the largest u32 line number",
    line: "a.md:0-4294967295|note=[x]",
    parsed: entry("a.md", 0, 4294967295, "x"),
  },
  {
    name: "an end before the start, kept as written",
    line: "a.md:9-3|note=[x]",
    parsed: entry("a.md", 9, 3, "x"),
  },
  {
    name: "NEL around the line, trimmed like Rust",
    line: "\u0085a.md:1-2|note=[x]\u0085",
    parsed: entry("a.md", 1, 2, "x"),
  },
  {
    name: "a BOM before the path, kept like Rust",
    line: "\uFEFFa.md:1-2|note=[x]",
    parsed: entry("\uFEFFa.md", 1, 2, "x"),
  },
  { name: "a line past u32", line: "a.md:1-4294967296|note=[x]", parsed: null },
  { name: "a start past u32", line: "a.md:99999999999999999999-2|note=[x]", parsed: null },
  { name: "no note marker", line: "MEMORY.md:1-2", parsed: null },
  { name: "a note without its closing bracket", line: "MEMORY.md:1-2|note=[x", parsed: null },
  { name: "text after the note's bracket", line: "MEMORY.md:1-2|note=[x] more", parsed: null },
  { name: "no colon", line: "MEMORY.md 1-2|note=[x]", parsed: null },
  { name: "no dash in the range", line: "MEMORY.md:12|note=[x]", parsed: null },
  { name: "a second dash (the first dash splits)", line: "MEMORY.md:1-2-3|note=[x]", parsed: null },
  { name: "a negative start", line: "MEMORY.md:-1-2|note=[x]", parsed: null },
  { name: "a missing end", line: "MEMORY.md:1-|note=[x]", parsed: null },
  { name: "a decimal line number", line: "MEMORY.md:1.0-2|note=[x]", parsed: null },
  { name: "a hexadecimal line number", line: "MEMORY.md:0x1-2|note=[x]", parsed: null },
  { name: "non-ASCII digits", line: "MEMORY.md:١-٢|note=[x]", parsed: null },
  { name: "a bare plus sign", line: "MEMORY.md:+-2|note=[x]", parsed: null },
  { name: "two notes (the range swallows the first)", line: "a.md:1-2|note=[x]|note=[y]", parsed: null },
];

describe("parseCitationBodies: entry lines", () => {
  it.each(entryLines)("parses $name", ({ line, parsed }) => {
    const citation = parseCitationBodies([`${entriesBody(line)}\n<rollout_ids>\n${ID_A}\n</rollout_ids>`]);
    expect(citation).toEqual({ entries: parsed === null ? [] : [parsed], rolloutIds: [ID_A] });
  });

  it("parses the documented format into its entries and rollout id", () => {
    expect(parseCitationBodies([FORMAT_BODY])).toEqual({
      entries: [
        entry("MEMORY.md", 234, 236, "short note"),
        entry("rollout_summaries/2026-02-17T21-23-02-LN3m-example.md", 10, 12, "weekly report format"),
      ],
      rolloutIds: [ID_A],
    });
  });

  it("[56] skips malformed and blank lines but keeps the good ones around them", () => {
    const body = entriesBody("MEMORY.md:1-2|note=[x]", "", "garbage", "   ", "b.md:3-4|note=[y]\r");
    expect(parseCitationBodies([body])).toEqual({
      entries: [entry("MEMORY.md", 1, 2, "x"), entry("b.md", 3, 4, "y")],
      rolloutIds: [],
    });
  });

  it("reads entries only from the first entries block of a body", () => {
    const body = `MEMORY.md:1-2|note=[outside]\n${entriesBody("a.md:1-2|note=[first]")}\n${entriesBody("b.md:3-4|note=[second]")}`;
    expect(parseCitationBodies([body])).toEqual({ entries: [entry("a.md", 1, 2, "first")], rolloutIds: [] });
  });

  it("ignores an entries block that is never closed", () => {
    expect(parseCitationBodies(["<citation_entries>\nMEMORY.md:1-2|note=[x]\n"])).toBeNull();
  });

  it("keeps entries from every body in order, repeats included", () => {
    const body = entriesBody("MEMORY.md:1-2|note=[x]");
    expect(parseCitationBodies([body, entriesBody("b.md:3-4|note=[y]"), body])).toEqual({
      entries: [entry("MEMORY.md", 1, 2, "x"), entry("b.md", 3, 4, "y"), entry("MEMORY.md", 1, 2, "x")],
      rolloutIds: [],
    });
  });
});

describe("parseCitationBodies: rollout ids", () => {
  const idCases: { name: string; bodies: string[]; rolloutIds: string[] }[] = [
    {
      name: "[57] de-duplicates ids across bodies in first-seen order",
      bodies: [
        `<rollout_ids>\n${ID_A}\n${ID_B}\n${ID_A}\n</rollout_ids>`,
        `<rollout_ids>\n${ID_B}\nlater\n</rollout_ids>`,
      ],
      rolloutIds: [ID_A, ID_B, "later"],
    },
    {
      name: "[57] accepts the legacy <thread_ids> block",
      bodies: [`<thread_ids>\n${ID_B}\n</thread_ids>`],
      rolloutIds: [ID_B],
    },
    {
      name: "prefers <rollout_ids> over <thread_ids> in the same body",
      bodies: [`<thread_ids>\n${ID_B}\n</thread_ids>\n<rollout_ids>\n${ID_A}\n</rollout_ids>`],
      rolloutIds: [ID_A],
    },
    {
      name: "falls back to <thread_ids> when <rollout_ids> is never closed",
      bodies: [`<rollout_ids>\n${ID_A}\n<thread_ids>\n${ID_B}\n</thread_ids>`],
      rolloutIds: [ID_B],
    },
    {
      name: "trims ids and drops blank lines, keeping non-UUIDs in the citation",
      bodies: [`<rollout_ids>\n  ${ID_A}  \n\n \t \nnot-a-uuid\r\n</rollout_ids>`],
      rolloutIds: [ID_A, "not-a-uuid"],
    },
    {
      name: "reads ids from a block on one line",
      bodies: [`<rollout_ids>${ID_A}</rollout_ids>`],
      rolloutIds: [ID_A],
    },
  ];

  it.each(idCases)("$name", ({ bodies, rolloutIds }) => {
    expect(parseCitationBodies(bodies)).toEqual({ entries: [], rolloutIds });
  });
});

describe("parseCitationBodies: no citation", () => {
  it.each([
    { name: "no bodies", bodies: [] },
    { name: "a body with free text only", bodies: ["doc1"] },
    {
      name: "empty blocks",
      bodies: ["<citation_entries>\n</citation_entries>\n<rollout_ids>\n</rollout_ids>"],
    },
    {
      name: "only malformed entries and blank ids",
      bodies: [`${entriesBody("nope", "MEMORY.md:1-x|note=[x]")}\n<thread_ids>\n \n</thread_ids>`],
    },
  ])("[56] gives none for $name", ({ bodies }) => {
    expect(parseCitationBodies(bodies)).toBeNull();
  });
});

// The rule of docs/reference-behavior.md §9 read step by step with plain string operations, as an oracle.
const RUST_SPACE = "[\\t-\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]";
const rustTrim = (text: string): string =>
  text.replace(new RegExp(`^${RUST_SPACE}+|${RUST_SPACE}+$`, "g"), "");
function u32(text: string): number | null {
  return /^\+?[0-9]+$/.test(text) && Number(text) <= 4294967295 ? Number(text) : null;
}
function entryByTheRule(raw: string): MemoryCitationEntry | null {
  const line = rustTrim(raw);
  const marker = line.lastIndexOf("|note=[");
  if (line === "" || marker === -1) return null;
  const [location, noteText] = [line.slice(0, marker), line.slice(marker + "|note=[".length)];
  if (!noteText.endsWith("]") || !location.includes(":")) return null;
  const [path, range] = [
    location.slice(0, location.lastIndexOf(":")),
    location.slice(location.lastIndexOf(":") + 1),
  ];
  if (!range.includes("-")) return null;
  const lineStart = u32(rustTrim(range.slice(0, range.indexOf("-"))));
  const lineEnd = u32(rustTrim(range.slice(range.indexOf("-") + 1)));
  if (lineStart === null || lineEnd === null) return null;
  return { path: rustTrim(path), lineStart, lineEnd, note: rustTrim(noteText.slice(0, -1)) };
}

describe("parseCitationBodies properties", () => {
  it("agrees with a step-by-step reading of the entry rule on random lines", () => {
    const linePiece = fc.constantFrom(
      "|note=[",
      "]",
      "[",
      ":",
      "-",
      " ",
      "\u0085",
      "\uFEFF",
      "\r",
      "+",
      "0",
      "7",
      "4294967296",
      "a.md",
      "x",
    );
    const text = (pieces: fc.Arbitrary<string>) =>
      fc.array(pieces, { maxLength: 4 }).map((parts) => parts.join(""));
    const pathish = text(fc.constantFrom("a.md", "C:\\", ":", "-", " ", "|note=[", "\u0085"));
    const numberish = text(fc.constantFrom("0", "7", "+", " ", "-", "4294967295", "4294967296", "x"));
    const noteish = text(fc.constantFrom("n", " ", "]", "[", "|note=[", ":"));
    // Mostly well-shaped lines with perturbed parts, plus free-form ones.
    const shapedLine = fc
      .tuple(pathish, numberish, numberish, noteish, text(fc.constantFrom(" ", "]", "x")))
      .map(([path, start, end, note, tail]) => `${path}:${start}-${end}|note=[${note}]${tail}`);
    const line = fc.oneof(shapedLine, text(linePiece));
    fc.assert(
      fc.property(fc.array(line, { maxLength: 8 }), (lines) => {
        const expected = lines.map(entryByTheRule).filter((parsed) => parsed !== null);
        const citation = parseCitationBodies([entriesBody(...lines)]);
        expect(citation?.entries ?? []).toEqual(expected);
      }),
      { numRuns: 2000 },
    );
  });

  const piece = fc.constantFrom(
    "<citation_entries>",
    "</citation_entries>",
    "<rollout_ids>",
    "</rollout_ids>",
    "<thread_ids>",
    "</thread_ids>",
    "|note=[",
    "]",
    ":",
    "-",
    "\n",
    " ",
    "4294967296",
    "12",
    "+",
    "MEMORY.md",
    ID_A,
  );
  const body = fc.oneof(
    fc.array(piece, { maxLength: 40 }).map((parts) => parts.join("")),
    fc.string(),
  );

  it("never throws and always returns a citation the wire schema accepts, or none", () => {
    fc.assert(
      fc.property(fc.array(body, { maxLength: 4 }), (bodies) => {
        const citation = parseCitationBodies(bodies);
        if (citation !== null) expect(MemoryCitationSchema.parse(citation)).toEqual(citation);
      }),
      { numRuns: 1000 },
    );
  });

  it("never repeats a rollout id", () => {
    fc.assert(
      fc.property(fc.array(body, { maxLength: 4 }), (bodies) => {
        const ids = parseCitationBodies(bodies)?.rolloutIds ?? [];
        expect(new Set(ids).size).toBe(ids.length);
      }),
    );
  });
});

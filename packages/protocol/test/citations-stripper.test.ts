import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createCitationStripper } from "../src/citations/index.js";
import { CLOSE, cutAt, FORMAT_BODY, OPEN, span, streamThrough } from "./citations-support.js";

// Reference §9 examples and checklist 54–55, with what the reader sees and what is extracted.
const examples: { name: string; text: string; visible: string; bodies: string[] }[] = [
  {
    name: "removes every span and keeps the text around them",
    text: `a${span("one")}b${span("two")}c`,
    visible: "abc",
    bodies: ["one", "two"],
  },
  {
    name: "[55] ends a span at the first close tag (no nesting)",
    text: `a${OPEN}x${OPEN}y${CLOSE}z${CLOSE}b`,
    visible: `az${CLOSE}b`,
    bodies: [`x${OPEN}y`],
  },
  {
    name: "[54] hides the documented citation block between two words",
    text: `hello${span(FORMAT_BODY)} world`,
    visible: "hello world",
    bodies: [FORMAT_BODY],
  },
  {
    name: "[55] auto-closes a span still open at the end of the stream",
    text: `x${OPEN}source`,
    visible: "x",
    bodies: ["source"],
  },
  {
    name: "keeps a partial close tag in the body of an auto-closed span",
    text: `x${OPEN}source</oai-mem-`,
    visible: "x",
    bodies: ["source</oai-mem-"],
  },
  {
    name: "[55] releases a trailing partial open tag as visible text",
    text: "hello <oai-mem-",
    visible: "hello <oai-mem-",
    bodies: [],
  },
  {
    name: "extracts an empty span as an empty body",
    text: `a${span("")}b`,
    visible: "ab",
    bodies: [""],
  },
  {
    name: "leaves a close tag without an open tag visible",
    text: `a${CLOSE}b`,
    visible: `a${CLOSE}b`,
    bodies: [],
  },
  {
    name: "leaves a look-alike tag visible",
    text: "<oai-mem-citations>x</oai-mem-citations> <OAI-MEM-CITATION>y",
    visible: "<oai-mem-citations>x</oai-mem-citations> <OAI-MEM-CITATION>y",
    bodies: [],
  },
  {
    name: "hides a span that is the whole reply",
    text: span("doc1"),
    visible: "",
    bodies: ["doc1"],
  },
  {
    name: "passes text without tags through unchanged",
    text: "plain <b>text</b> with < and > signs\n",
    visible: "plain <b>text</b> with < and > signs\n",
    bodies: [],
  },
];

describe("createCitationStripper", () => {
  it.each(examples)("$name", ({ text, visible, bodies }) => {
    expect(streamThrough([text])).toEqual({ visible, bodies });
  });

  it.each(examples)("$name, for every two-chunk split", ({ text, visible, bodies }) => {
    for (let cut = 0; cut <= text.length; cut += 1) {
      expect(streamThrough(cutAt(text, [cut])), `cut at ${cut}`).toEqual({ visible, bodies });
    }
  });

  it.each(examples)("$name, for every three-chunk split", ({ text, visible, bodies }) => {
    for (let first = 0; first <= text.length; first += 1) {
      for (let second = first; second <= text.length; second += 1) {
        const result = streamThrough(cutAt(text, [first, second]));
        if (result.visible !== visible || result.bodies.join("\0") !== bodies.join("\0")) {
          expect(result, `cuts at ${first} and ${second}`).toEqual({ visible, bodies });
        }
      }
    }
  });

  it.each(examples)("$name, one character at a time", ({ text, visible, bodies }) => {
    expect(streamThrough([...text])).toEqual({ visible, bodies });
  });

  it("[54] strips a citation split as `<oai-mem-` | `citation>`", () => {
    const chunks = ["hello<oai-mem-", `citation>${FORMAT_BODY}${CLOSE} world`];
    expect(streamThrough(chunks)).toEqual({ visible: "hello world", bodies: [FORMAT_BODY] });
  });

  it("holds back a partial open tag and shows the text before it at once", () => {
    const stripper = createCitationStripper();
    const deltas = [stripper.push("hello <oai-mem-"), stripper.push(`citation>x${CLOSE} world`)];
    expect({ deltas, tail: stripper.finish(), bodies: stripper.bodies }).toEqual({
      deltas: ["hello ", " world"],
      tail: "",
      bodies: ["x"],
    });
  });

  it("releases a held-back prefix as soon as the next chunk proves it is not a tag", () => {
    const stripper = createCitationStripper();
    const deltas = [stripper.push("a <oai-mem-"), stripper.push("cit"), stripper.push("ing")];
    expect({ deltas, tail: stripper.finish(), bodies: stripper.bodies }).toEqual({
      deltas: ["a ", "", "<oai-mem-citing"],
      tail: "",
      bodies: [],
    });
  });

  it("[55] releases a partial open tag at the end of the stream", () => {
    const stripper = createCitationStripper();
    const delta = stripper.push("hello <oai-mem-");
    expect({ delta, tail: stripper.finish(), bodies: stripper.bodies }).toEqual({
      delta: "hello ",
      tail: "<oai-mem-",
      bodies: [],
    });
  });

  it("reports a body as soon as its close tag arrives", () => {
    const stripper = createCitationStripper();
    stripper.push(`a${OPEN}first`);
    const whileOpen = [...stripper.bodies];
    stripper.push(`${CLOSE}b`);
    expect({ whileOpen, afterClose: [...stripper.bodies] }).toEqual({ whileOpen: [], afterClose: ["first"] });
  });
});

// Strings rich in tag fragments, so random cuts and joins often build or break real tags.
const fragment = fc.constantFrom(
  OPEN,
  CLOSE,
  "<oai-mem-",
  "citation>",
  "</oai-",
  "<",
  "/",
  ">",
  "a",
  " ",
  "\n",
  "é",
  "😀",
);
const tagHeavyText = fc.oneof(
  fc.array(fragment, { maxLength: 30 }).map((parts) => parts.join("")),
  fc.string(),
);

describe("createCitationStripper properties", () => {
  it("gives the same visible text and bodies however the input is chunked", () => {
    fc.assert(
      fc.property(tagHeavyText, fc.array(fc.nat(), { maxLength: 8 }), (text, rawCuts) => {
        const cuts = rawCuts.map((cut) => cut % (text.length + 1)).sort((a, b) => a - b);
        expect(streamThrough(cutAt(text, cuts))).toEqual(streamThrough([text]));
      }),
      { numRuns: 500 },
    );
  });

  it("never shows the body of a well-formed span, whatever text surrounds it", () => {
    // Bodies carry a marker made of characters the surrounding text cannot contain.
    const filler = fc.array(fragment, { maxLength: 6 }).map((parts) => parts.join(""));
    const bodyText = fc.array(fc.constantFrom("x", "<", ">", "/", "\n", "<oai-mem-", "citation"), {
      maxLength: 5,
    });
    fc.assert(
      fc.property(
        fc.array(fc.tuple(filler, bodyText), { minLength: 1, maxLength: 5 }),
        filler,
        (pieces, end) => {
          const markers = pieces.map((_, index) => `§${index}§`);
          const text =
            pieces
              .map(([before, body], index) => `${before}${span(`${body.join("")}${markers[index]}`)}`)
              .join("") + end;
          const { visible, bodies } = streamThrough([text]);
          const extracted = bodies.join("\n");
          expect({
            visibleMarkers: markers.filter((marker) => visible.includes(marker)),
            extractedMarkers: markers.filter((marker) => extracted.includes(marker)),
          }).toEqual({ visibleMarkers: [], extractedMarkers: markers });
        },
      ),
      { numRuns: 500 },
    );
  });

  it("shows spans' surroundings verbatim when no surrounding text looks like a tag", () => {
    const plain = fc.string().filter((text) => !text.includes("<"));
    const body = fc.string().filter((text) => !text.includes(CLOSE));
    fc.assert(
      fc.property(fc.array(fc.tuple(plain, body), { maxLength: 5 }), plain, (pieces, end) => {
        const text = pieces.map(([before, inner]) => before + span(inner)).join("") + end;
        expect(streamThrough([text])).toEqual({
          visible: pieces.map(([before]) => before).join("") + end,
          bodies: pieces.map(([, inner]) => inner),
        });
      }),
    );
  });
});

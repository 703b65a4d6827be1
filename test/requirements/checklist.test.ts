import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CHECKLIST } from "./checklist.js";
import { caveatOf, checklistCoverage, checklistReport } from "./checklist-report.js";
import { checklistTags, testTitles } from "./test-titles.js";

/** A reason says something: a word or two is not one. */
const MIN_REASON_LENGTH = 20;

describe("the acceptance checklist (docs/reference-behavior.md §12)", () => {
  const coverage = checklistCoverage();
  const tagged = (id: number) => coverage.get(id) ?? [];

  it("lists the 62 items of the reference, in order", () => {
    expect(CHECKLIST.map((item) => item.id)).toEqual(Array.from({ length: 62 }, (_, i) => i + 1));
  });

  it("words each item as the reference's §12 does (docs/reference-behavior.md)", () => {
    const reference = readFileSync(new URL("../../docs/reference-behavior.md", import.meta.url), "utf8");
    const section = reference.slice(reference.indexOf("\n## 12. Acceptance checklist\n"));
    const items = [...section.matchAll(/^(\d+)\. (.*)$/gm)].map(([, id, text]) => ({ id: Number(id), text }));
    expect(CHECKLIST.map(({ id, text }) => ({ id, text }))).toStrictEqual(items);
  });

  it("has a test titled [N] for every item it counts as covered", () => {
    const untested = CHECKLIST.filter((item) => item.covered && tagged(item.id).length === 0);
    expect(untested.map((item) => item.id)).toEqual([]);
  });

  it("has no test titled [N] for an item it counts as not covered, nor for a number past the list", () => {
    const contradicted = [...coverage.keys()].filter(
      (id) => !CHECKLIST.some((item) => item.id === id && item.covered),
    );
    expect(contradicted).toEqual([]);
  });

  it("says how an item differs wherever a test is titled [N differs], and only there", () => {
    const unexplained = CHECKLIST.filter(
      (item) => item.covered && tagged(item.id).some((test) => test.differs) && item.differs === undefined,
    );
    const unshown = CHECKLIST.filter(
      (item) => item.covered && item.differs !== undefined && !tagged(item.id).some((test) => test.differs),
    );
    expect({ unexplained: unexplained.map((i) => i.id), unshown: unshown.map((i) => i.id) }).toEqual({
      unexplained: [],
      unshown: [],
    });
  });

  it("reports no partial, differing or uncovered item without a reason", () => {
    const report = checklistReport(CHECKLIST, coverage);
    console.log(report.join("\n"));
    const unexplained = CHECKLIST.filter((item) =>
      caveatOf(item).some((caveat) => caveat.reason.trim().length < MIN_REASON_LENGTH),
    );
    expect(unexplained.map((item) => item.id)).toEqual([]);
    expect(report.filter((line) => line.includes("(NO REASON GIVEN)"))).toEqual([]);
  });
});

describe("test titles", () => {
  it("are the first argument of it, test and describe, in every form, and each .each row's", () => {
    const source = `
      describe("[1] outer", () => {
        it("[2] plain", () => {});
        test.concurrent('[3] concurrent', async () => {});
        it.skipIf(process.env.CI)(\`[4] template\`, () => {});
        it.each<{ name: string; n: number }>([
          { name: "[5] first row", n: 1 },
          { name: "second row", n: 2 },
        ])("$name", ({ n }) => {});
        describe.each(cases)("[6] $name", () => {});
        it.each([{ choice: "allow", mode: "auto", result: { decision: "approved" } }])(
          "[7] $choice in mode $mode decides $result.decision",
          () => {},
        );
        expect.it("not a test");
        helper.it("not a test either");
      });
      const cases = [{ name: "a" }];
    `;
    expect(testTitles(source)).toEqual([
      "[1] outer",
      "[2] plain",
      "[3] concurrent",
      "[4] template",
      "$name",
      "[5] first row",
      "second row",
      "[6] $name",
      "[6] a",
      "[7] $choice in mode $mode decides $result.decision",
      "[7] allow in mode auto decides $result.decision",
    ]);
  });

  it("leave out what comments, strings and regular expressions quote", () => {
    const source = `
      // it("[7] in a line comment")
      /* it("[8] in a block comment") */
      const text = 'it("[9] in a string")';
      const pattern = /it\\("[10] in a regex"/g;
      const template = \`it("[11] in a template \${\`nested \${"deep"}\`}")\`;
      it("[12] real", () => {});
    `;
    expect(testTitles(source)).toEqual(["[12] real"]);
  });

  it("tag checklist items only at the start: [N], [N][M], [N, M] and [N differs]", () => {
    expect(
      [
        "[29] rejects a stale call",
        "[38][42] a hook's deny",
        "[38, 42] a hook's deny",
        "[24 differs] lists the tool directly",
        "rejects args [1] (checklist 26)",
        "[x] not a number",
      ].map(checklistTags),
    ).toEqual([
      [{ id: 29, differs: false }],
      [
        { id: 38, differs: false },
        { id: 42, differs: false },
      ],
      [
        { id: 38, differs: false },
        { id: 42, differs: false },
      ],
      [{ id: 24, differs: true }],
      [],
      [],
    ]);
  });
});

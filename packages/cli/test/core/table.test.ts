import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fitWidths, renderTable, tableWidth } from "../../src/core/table.js";
import { displayWidth } from "../../src/core/text.js";

const columns = [
  { header: "name" },
  { header: "description", flex: true },
  { header: "n", align: "right" as const },
];

describe("renderTable", () => {
  it("aligns columns two spaces apart under a header, without trailing spaces", () => {
    expect(
      renderTable(columns, [
        ["echo", "Echoes", "1"],
        ["summarize", "Summarizes text", "12"],
      ]),
    ).toEqual([
      "name       description       n",
      "echo       Echoes            1",
      "summarize  Summarizes text  12",
    ]);
  });

  it("cuts the flexible column when the table is wider than the terminal", () => {
    expect(
      renderTable(columns, [["echo", "Echoes its arguments back to the caller", "1"]], { maxWidth: 30 }),
    ).toEqual(["name  description            n", "echo  Echoes its arguments…  1"]);
  });

  it("keeps a multi-line or escape-laden cell on one line", () => {
    expect(renderTable([{ header: "a" }, { header: "b" }], [["x\ny", "\u001b[2Jz"]])).toEqual([
      "a    b",
      "x y  [2Jz",
    ]);
  });

  it("styles cells outside the padding so columns stay aligned", () => {
    const lines = renderTable([{ header: "s" }, { header: "t" }], [["ok", "x"]], {
      paint: (column, text) => (column === 0 ? `<${text}>` : text),
    });
    expect(lines).toEqual(["s   t", "<ok>  x"]);
  });

  it("fits every line in the width whenever the flexible columns can give enough", () => {
    const word = fc.string({ unit: fc.constantFrom("a", "b", " ", "日"), maxLength: 60 });
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.string({ maxLength: 6 }), word, fc.nat(999)), { maxLength: 6 }),
        fc.integer({ min: 30, max: 120 }),
        (rows, width) => {
          const lines = renderTable(
            columns,
            rows.map(([a, b, n]) => [a, b, String(n)]),
            { maxWidth: width },
          );
          return lines.every((line) => displayWidth(line) <= width);
        },
      ),
    );
  });
});

describe("fitWidths", () => {
  it("does not shrink a flexible column below its minimum", () => {
    expect(fitWidths([{ header: "id" }, { header: "description", flex: true }], [30, 80], 20)).toEqual([
      30, 11,
    ]);
  });
});

describe("tableWidth", () => {
  it.each([
    [{ isTTY: true, columns: 100 }, {}, 100],
    [{ isTTY: true, columns: 0 }, { COLUMNS: "72" }, 72],
    [{ isTTY: false, columns: undefined }, { COLUMNS: "90" }, 90],
    [{ isTTY: false, columns: undefined }, {}, Number.POSITIVE_INFINITY],
  ])("is the terminal's width, else COLUMNS, else unlimited (%j, %j)", (stream, env, width) => {
    expect(tableWidth(stream, env)).toBe(width);
  });
});

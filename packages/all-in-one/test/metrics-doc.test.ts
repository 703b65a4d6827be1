// docs/operations.md's "Metrics" table lists every instrument the services declare, with the
// same type, unit, attributes and meaning, and nothing else: checked both ways.
import { readFileSync } from "node:fs";
import { APPROVALS_METRICS } from "@toolbus/approvals";
import { BUS_METRICS } from "@toolbus/bus";
import { CATALOG_METRICS } from "@toolbus/catalog";
import { DISPATCHER_METRICS } from "@toolbus/dispatcher";
import { GATEWAY_METRICS } from "@toolbus/gateway";
import { MEMORY_METRICS } from "@toolbus/memory";
import { describe, expect, it } from "vitest";
import { type MetricDocRow, metricDocRows } from "./support/metric-doc-rows.js";

const OPERATIONS = new URL("../../../docs/operations.md", import.meta.url);

/** In the order the document lists them: the bus first, then the services along a call's path. */
const DECLARED = [
  BUS_METRICS,
  CATALOG_METRICS,
  DISPATCHER_METRICS,
  APPROVALS_METRICS,
  MEMORY_METRICS,
  GATEWAY_METRICS,
];

/** The rows of the first table under `## <heading>`, keyed by the header cells. */
function tableUnder(markdown: string, heading: string): Record<string, string>[] {
  const section = markdown.split(/^## /m).find((part) => part.startsWith(`${heading}\n`));
  if (section === undefined) throw new Error(`docs/operations.md has no "## ${heading}" section`);
  const cells = (line: string) =>
    line
      .slice(1, -1)
      .split("|")
      .map((cell) => cell.trim());
  const [header, , ...rows] = section.split("\n").filter((line) => line.startsWith("|"));
  if (header === undefined) throw new Error(`docs/operations.md has no table under "## ${heading}"`);
  const keys = cells(header);
  return rows.map((row) => Object.fromEntries(cells(row).map((cell, i) => [keys[i] ?? `${i}`, cell])));
}

describe("docs/operations.md Metrics", () => {
  const documented = tableUnder(readFileSync(OPERATIONS, "utf8"), "Metrics");
  const declared: MetricDocRow[] = metricDocRows(DECLARED.flatMap((set) => Object.values(set.specs)));

  it("documents every declared metric, and only those", () => {
    const names = (rows: ReadonlyArray<{ metric?: string }>) => new Set(rows.map((row) => row.metric ?? ""));
    const inReadme = names(documented);
    const inCode = names(declared);
    expect({
      undocumented: [...inCode].filter((name) => !inReadme.has(name)),
      notDeclared: [...inReadme].filter((name) => !inCode.has(name)),
    }).toEqual({ undocumented: [], notDeclared: [] });
  });

  it("gives each metric's type, unit, attributes and meaning as declared, in the same order", () => {
    expect(documented).toEqual(declared);
  });
});

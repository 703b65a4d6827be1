/**
 * Which tests stand for which checklist items (a test whose title starts with `[N]`), and the
 * report of the items that are not simply covered: partial, differing from the reference's
 * text, or not covered, each with its reason. `checklist.test.ts` prints it; so does
 * `node --import tsx test/requirements/checklist-report.ts`.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { CHECKLIST, type Requirement } from "./checklist.js";
import { checklistTags, testTitles } from "./test-titles.js";

export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SKIP = new Set(["node_modules", "dist", "dist-test", ".git", ".toolbus"]);

export interface TaggedTest {
  /** Relative to the repository root. */
  file: string;
  title: string;
  /** Tagged `[N differs]`: it asserts toolbus's rule where that departs from the item's text. */
  differs: boolean;
}

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (SKIP.has(entry.name)) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return path === join(REPO_ROOT, "test/requirements") ? [] : testFiles(path);
    return entry.name.endsWith(".test.ts") ? [path] : [];
  });
}

/** Every test tagged with a checklist item, by item. */
export function checklistCoverage(root = REPO_ROOT): Map<number, TaggedTest[]> {
  const coverage = new Map<number, TaggedTest[]>();
  for (const path of testFiles(root)) {
    const file = relative(root, path);
    for (const title of testTitles(readFileSync(path, "utf8"))) {
      for (const { id, differs } of checklistTags(title)) {
        coverage.set(id, [...(coverage.get(id) ?? []), { file, title, differs }]);
      }
    }
  }
  return coverage;
}

/** Why an item is not simply covered: none for an item fully covered. */
export function caveatOf(
  item: Requirement,
): { kind: "partial" | "differs" | "not covered"; reason: string }[] {
  if (!item.covered) return [{ kind: "not covered", reason: item.reason }];
  return [
    ...(item.partial !== undefined ? [{ kind: "partial" as const, reason: item.partial }] : []),
    ...(item.differs !== undefined ? [{ kind: "differs" as const, reason: item.differs }] : []),
  ];
}

/** The report's lines: a summary, then each item with a caveat, its reason and its tests. */
export function checklistReport(
  checklist: readonly Requirement[],
  coverage: ReadonlyMap<number, readonly TaggedTest[]>,
): string[] {
  const covered = checklist.filter((item) => item.covered).length;
  const count = (kind: string) =>
    checklist.filter((item) => caveatOf(item).some((caveat) => caveat.kind === kind)).length;
  const lines = [
    `Acceptance checklist (docs/reference-behavior.md §12): ${checklist.length} items, ${covered} covered ` +
      `(${count("partial")} partly, ${count("differs")} differing from the reference's text), ` +
      `${checklist.length - covered} not covered.`,
  ];
  for (const item of checklist) {
    const caveats = caveatOf(item);
    if (caveats.length === 0) continue;
    lines.push("", `[${item.id}] ${item.text}`);
    for (const { kind, reason } of caveats) lines.push(`  ${kind}: ${reason.trim() || "(NO REASON GIVEN)"}`);
    const byFile = new Map<string, TaggedTest[]>();
    for (const test of coverage.get(item.id) ?? [])
      byFile.set(test.file, [...(byFile.get(test.file) ?? []), test]);
    for (const [file, tests] of byFile) {
      const more = tests.length > 1 ? ` (and ${tests.length - 1} more)` : "";
      lines.push(`  test: ${file}: ${tests[0]!.title}${more}`);
    }
  }
  return lines;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(checklistReport(CHECKLIST, checklistCoverage()).join("\n"));
}

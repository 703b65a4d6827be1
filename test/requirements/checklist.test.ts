import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { CHECKLIST } from "./checklist.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SKIP = new Set(["node_modules", "dist", "dist-test", ".git", ".toolbus"]);

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (SKIP.has(entry.name)) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith(".test.ts") && !path.includes("test/requirements") ? [path] : [];
  });
}

/** `checklist 25`, `checklist 25–26`, `checklist items 1, 2 and 4`: every item number a file names. */
export function namedItems(text: string): Set<number> {
  const items = new Set<number>();
  const mention =
    /checklist(?: items?)? ?((?:\d+(?:\s*[–-]\s*\d+)?)(?:\s*(?:,|and|&)\s*\d+(?:\s*[–-]\s*\d+)?)*)/g;
  for (const match of text.matchAll(mention)) {
    for (const part of match[1]!.split(/\s*(?:,|and|&)\s*/)) {
      const [from, to = from] = part.split(/\s*[–-]\s*/).map(Number);
      for (let n = from!; n <= to!; n++) items.add(n);
    }
  }
  return items;
}

describe("the acceptance checklist (codex-mcp-behavior.md §12)", () => {
  const coverage = new Map<number, string[]>();
  for (const file of testFiles(ROOT)) {
    for (const item of namedItems(readFileSync(file, "utf8"))) {
      coverage.set(item, [...(coverage.get(item) ?? []), relative(ROOT, file)]);
    }
  }

  it("lists the 62 items of the reference, in order", () => {
    expect(CHECKLIST.map((item) => item.id)).toEqual(Array.from({ length: 62 }, (_, i) => i + 1));
  });

  it("has a test file naming every item it claims to cover", () => {
    const uncovered = CHECKLIST.filter((item) => item.covered && !coverage.has(item.id)).map(
      (item) => item.id,
    );
    expect(uncovered).toEqual([]);
  });

  it("gives a reason for every item out of scope", () => {
    const unexplained = CHECKLIST.filter((item) => !item.covered && item.reason.trim().length < 20);
    expect(unexplained).toEqual([]);
  });

  it("reads item numbers, ranges and lists out of test text", () => {
    expect(
      [...namedItems("checklist 4; checklist 25–27, and checklist items 1, 2 and 9")].sort((a, b) => a - b),
    ).toEqual([1, 2, 4, 9, 25, 26, 27]);
  });
});

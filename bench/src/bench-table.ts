/**
 * What every benchmark hands back and how the runner prints it: rows of named columns, a
 * nearest-rank percentile, and a plain-text table (columns are the union over all rows).
 */
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";

export type BenchRow = { name: string; [column: string]: string | number };

/** A benchmark with more than one kind of row hands back tables, each with a title. */
export interface BenchTable {
  title: string;
  rows: BenchRow[];
}

/** What a benchmark hands back: one table's rows, or titled tables. */
export type BenchResult = BenchRow[] | BenchTable[];

export function formatResult(result: BenchResult): string {
  if (!isTables(result)) return formatTable(result);
  return result.map((table) => `${table.title}\n${formatTable(table.rows)}`).join("\n\n");
}

function isTables(result: BenchResult): result is BenchTable[] {
  const [first] = result;
  return first !== undefined && Array.isArray(first.rows);
}

/** Nearest-rank percentile of ascending values. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(p * sorted.length)));
  return sorted[rank - 1]!;
}

/** Milliseconds with three decimals, as a number so the table right-aligns it. */
export function ms(value: number): number {
  return Math.round(value * 1000) / 1000;
}

/** Summary columns of a set of timings in milliseconds. */
export function timings(samples: readonly number[]): Record<string, number> {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    runs: sorted.length,
    "median ms": ms(percentile(sorted, 0.5)),
    "p90 ms": ms(percentile(sorted, 0.9)),
    "min ms": ms(sorted[0] ?? Number.NaN),
    "max ms": ms(sorted.at(-1) ?? Number.NaN),
  };
}

export function formatTable(rows: readonly BenchRow[]): string {
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  const cell = (row: BenchRow, column: string) => (row[column] === undefined ? "" : String(row[column]));
  const widths = columns.map((column) =>
    Math.max(column.length, ...rows.map((row) => cell(row, column).length)),
  );
  const line = (values: string[], numeric: boolean[]) =>
    values.map((value, i) => (numeric[i] ? value.padStart(widths[i]!) : value.padEnd(widths[i]!))).join("  ");
  return [
    line(
      columns,
      columns.map(() => false),
    ),
    widths.map((width) => "-".repeat(width)).join("  "),
    ...rows.map((row) =>
      line(
        columns.map((column) => cell(row, column)),
        columns.map((column) => typeof row[column] === "number"),
      ),
    ),
  ].join("\n");
}

/** True when the module at `moduleUrl` is the one node was started with (a bench run on its own). */
export function isEntryModule(moduleUrl: string): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(moduleUrl));
  } catch {
    return false;
  }
}

/**
 * Aligned tables for list commands: a header row, columns two spaces apart, cells flattened to
 * one line. When the table is wider than the terminal, the flexible columns (descriptions,
 * errors) give up width, widest first, down to their minimum, and their cells end in `…`.
 */
import { displayWidth, oneLine, truncateToWidth } from "./text.js";

export interface Column {
  readonly header: string;
  /** Shrinks (its cells are cut) when the table does not fit. */
  readonly flex?: boolean;
  /** The narrowest a flexible column gets; default its header's width, at least 8. */
  readonly minWidth?: number;
  readonly align?: "left" | "right";
}

export interface TableOptions {
  /** Columns available; `Infinity` (the default) cuts nothing. */
  readonly maxWidth?: number;
  /** Styles a cell's text after it was cut; padding is added outside the styling. */
  readonly paint?: (column: number, text: string) => string;
  /** Styles the padded header row. */
  readonly paintHeader?: (line: string) => string;
}

export const COLUMN_GAP = "  ";

/** The table's lines, header first, without trailing spaces and without a final newline. */
export function renderTable(
  columns: readonly Column[],
  rows: readonly (readonly string[])[],
  options: TableOptions = {},
): string[] {
  const cells = rows.map((row) => columns.map((_, i) => oneLine(row[i] ?? "")));
  const natural = columns.map((column, i) =>
    Math.max(displayWidth(column.header), ...cells.map((row) => displayWidth(row[i] ?? ""))),
  );
  const widths = fitWidths(columns, natural, options.maxWidth ?? Number.POSITIVE_INFINITY);
  const last = columns.length - 1;
  const line = (values: readonly string[], paint?: TableOptions["paint"]) =>
    values
      .map((value, i) => {
        const width = widths[i] ?? 0;
        const cut = truncateToWidth(value, width);
        const styled = paint ? paint(i, cut) : cut;
        const pad = " ".repeat(Math.max(0, width - displayWidth(cut)));
        const align = columns[i]?.align ?? "left";
        if (align === "right") return pad + styled;
        return i === last ? styled : styled + pad;
      })
      .join(COLUMN_GAP)
      .trimEnd();
  const header = line(columns.map((c) => c.header));
  return [
    options.paintHeader ? options.paintHeader(header) : header,
    ...cells.map((row) => line(row, options.paint)),
  ];
}

/**
 * Column widths that fit `maxWidth` when the flexible columns can give enough: every flexible
 * column is capped at the same width C (never below its minimum), with C the largest that fits.
 */
export function fitWidths(
  columns: readonly Column[],
  natural: readonly number[],
  maxWidth: number,
): number[] {
  const gaps = COLUMN_GAP.length * Math.max(0, columns.length - 1);
  const total = natural.reduce((sum, w) => sum + w, 0) + gaps;
  if (total <= maxWidth) return [...natural];
  const minOf = (i: number) => {
    const column = columns[i];
    return Math.min(natural[i] ?? 0, column?.minWidth ?? Math.max(8, displayWidth(column?.header ?? "")));
  };
  const widthsAt = (cap: number) =>
    natural.map((w, i) => (columns[i]?.flex ? Math.max(minOf(i), Math.min(w, cap)) : w));
  const fits = (cap: number) => widthsAt(cap).reduce((sum, w) => sum + w, 0) + gaps <= maxWidth;
  let lo = 0;
  let hi = Math.max(0, ...natural);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return widthsAt(lo);
}

/** The width tables get: the terminal's, else `COLUMNS` when set, else no limit (a pipe). */
export function tableWidth(
  stream: { isTTY: boolean; columns: number | undefined },
  env: Readonly<Record<string, string | undefined>>,
): number {
  return terminalWidth(stream, env, Number.POSITIVE_INFINITY);
}

/** The terminal's columns when it reports them (a pseudo-terminal may say 0), else `COLUMNS`, else `fallback`. */
export function terminalWidth(
  stream: { isTTY: boolean; columns: number | undefined },
  env: Readonly<Record<string, string | undefined>>,
  fallback: number,
): number {
  if (stream.isTTY && stream.columns !== undefined && stream.columns > 0) return stream.columns;
  const columns = Number(env.COLUMNS);
  return Number.isInteger(columns) && columns > 0 ? columns : fallback;
}

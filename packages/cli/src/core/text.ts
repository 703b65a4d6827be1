/**
 * Text as a terminal shows it: the columns a string takes (wide CJK and emoji take two,
 * combining marks none), cutting to a width with an ellipsis, and flattening untrusted text
 * (tool descriptions, errors) to one line without control characters, so a server cannot
 * break the table or send escape sequences to the terminal.
 */

export const ELLIPSIS = "…";

/** Columns one code point takes. */
export function charWidth(codePoint: number): 0 | 1 | 2 {
  if (
    (codePoint >= 0x300 && codePoint <= 0x36f) ||
    (codePoint >= 0x200b && codePoint <= 0x200f) ||
    (codePoint >= 0xfe00 && codePoint <= 0xfe0f)
  ) {
    return 0;
  }
  if (
    (codePoint >= 0x1100 && codePoint <= 0x115f) ||
    (codePoint >= 0x2e80 && codePoint <= 0xa4cf && codePoint !== 0x303f) ||
    (codePoint >= 0xac00 && codePoint <= 0xd7a3) ||
    (codePoint >= 0xf900 && codePoint <= 0xfaff) ||
    (codePoint >= 0xfe30 && codePoint <= 0xfe4f) ||
    (codePoint >= 0xff00 && codePoint <= 0xff60) ||
    (codePoint >= 0xffe0 && codePoint <= 0xffe6) ||
    (codePoint >= 0x1f300 && codePoint <= 0x1f64f) ||
    (codePoint >= 0x1f900 && codePoint <= 0x1f9ff) ||
    (codePoint >= 0x20000 && codePoint <= 0x3fffd)
  ) {
    return 2;
  }
  return 1;
}

export function displayWidth(text: string): number {
  let width = 0;
  for (const char of text) width += charWidth(char.codePointAt(0) ?? 0);
  return width;
}

/** The text cut to at most `width` columns, ending in `…` when it was cut. */
export function truncateToWidth(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  if (width <= 0) return "";
  let out = "";
  let used = 0;
  for (const char of text) {
    const w = charWidth(char.codePointAt(0) ?? 0);
    if (used + w > width - 1) break;
    out += char;
    used += w;
  }
  return out + ELLIPSIS;
}

/** Pads with spaces to `width` columns (on the right, or on the left for `right`). */
export function padToWidth(text: string, width: number, align: "left" | "right" = "left"): string {
  const pad = " ".repeat(Math.max(0, width - displayWidth(text)));
  return align === "right" ? pad + text : text + pad;
}

// C0 and C1 controls and DEL; whitespace among them is handled first.
// biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/** One line: runs of whitespace become one space, control characters are removed. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").replace(CONTROL, "").trim();
}

/** Numbers as people read them: whole numbers as they are, others with at most two decimals. */
export function formatNumber(n: number): string {
  if (Number.isInteger(n)) return String(n);
  return String(Math.round(n * 100) / 100);
}

/**
 * Rust string behaviour the naming rules depend on: bytewise (UTF-8) ordering, truncation to a
 * byte budget on a char boundary, and `str::trim` (Unicode White_Space, unlike JS `trim`).
 */

/** Maps a UTF-16 code unit so that comparing mapped units orders strings by code point. */
function codePointRank(unit: number): number {
  if (unit < 0xd800) return unit;
  return unit >= 0xe000 ? unit - 0x800 : unit + 0x2000;
}

/** Orders strings as Rust orders `String`s: by their UTF-8 bytes (the same as by code point). */
export function compareUtf8(a: string, b: string): number {
  const shorter = Math.min(a.length, b.length);
  for (let i = 0; i < shorter; i += 1) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

function utf8Width(codePoint: number): number {
  if (codePoint < 0x80) return 1;
  if (codePoint < 0x800) return 2;
  return codePoint < 0x10000 ? 3 : 4;
}

/** The longest prefix of `text` that fits in `maxBytes` of UTF-8 without splitting a char. */
export function takeBytesAtCharBoundary(text: string, maxBytes: number): string {
  // A UTF-16 code unit never takes more than 3 UTF-8 bytes, so short text needs no walk.
  if (text.length * 3 <= maxBytes) return text;
  let bytes = 0;
  let end = 0;
  for (const char of text) {
    const width = utf8Width(char.codePointAt(0) ?? 0);
    if (bytes + width > maxBytes) break;
    bytes += width;
    end += char.length;
  }
  return text.slice(0, end);
}

/** Rust's `char::is_whitespace`; every such char is one UTF-16 code unit. */
function isRustWhitespace(unit: number): boolean {
  return (
    (unit >= 0x09 && unit <= 0x0d) ||
    unit === 0x20 ||
    unit === 0x85 ||
    unit === 0xa0 ||
    unit === 0x1680 ||
    (unit >= 0x2000 && unit <= 0x200a) ||
    unit === 0x2028 ||
    unit === 0x2029 ||
    unit === 0x202f ||
    unit === 0x205f ||
    unit === 0x3000
  );
}

/** Rust's `str::trim`. */
export function trimRust(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isRustWhitespace(text.charCodeAt(start))) start += 1;
  while (end > start && isRustWhitespace(text.charCodeAt(end - 1))) end -= 1;
  return text.slice(start, end);
}

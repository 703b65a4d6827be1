/**
 * The two Rust std behaviours the citation rules lean on, reproduced exactly: `str::trim`
 * (Unicode White_Space, which differs from JS `trim` on U+0085 and U+FEFF) and
 * `str::parse::<u32>` (optional `+`, ASCII digits only, at most 4294967295). Both work on a
 * range of a string so that parsing a large block allocates little.
 */

const U32_MAX = 4_294_967_295;

/** Rust's `char::is_whitespace`; every such char is one UTF-16 code unit. */
function isRustWhitespace(code: number): boolean {
  return (
    (code >= 0x09 && code <= 0x0d) ||
    code === 0x20 ||
    code === 0x85 ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000
  );
}

/** The bounds of `text[from..to]` once Rust's `trim` has removed its outer whitespace. */
export function trimmedBounds(text: string, from = 0, to = text.length): [start: number, end: number] {
  let start = from;
  let end = to;
  while (start < end && isRustWhitespace(text.charCodeAt(start))) start += 1;
  while (end > start && isRustWhitespace(text.charCodeAt(end - 1))) end -= 1;
  return [start, end];
}

export function trimRust(text: string): string {
  const [start, end] = trimmedBounds(text);
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

/** `text[from..to].trim().parse::<u32>()`: the number, or null where Rust gives an error. */
export function parseTrimmedU32(text: string, from: number, to: number): number | null {
  let [index, end] = trimmedBounds(text, from, to);
  if (index < end && text.charCodeAt(index) === 0x2b /* + */) index += 1;
  if (index >= end) return null;
  let value = 0;
  for (; index < end; index += 1) {
    const digit = text.charCodeAt(index) - 0x30;
    if (digit < 0 || digit > 9) return null;
    value = value * 10 + digit;
    if (value > U32_MAX) return null;
  }
  return value;
}

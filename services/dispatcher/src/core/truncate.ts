/**
 * Middle truncation of text on UTF-8 character boundaries (docs/reference-behavior.md §7): keep
 * a prefix of ⌊budget/2⌋ bytes and a suffix of the rest, and put a marker between them that
 * says how much was cut. Sizes are UTF-8 bytes; a JS string is walked by code point, so a
 * surrogate pair is never split. The marker is not counted against the budget.
 */
import type { TruncationPolicy } from "@toolbus/protocol";

const BYTES_PER_TOKEN = 4;

/** UTF-8 length of one code point; a lone surrogate encodes as U+FFFD (3 bytes). */
function codePointBytes(cp: number): number {
  if (cp < 0x80) return 1;
  if (cp < 0x800) return 2;
  if (cp < 0x10000) return 3;
  return 4;
}

export function utf8Length(text: string): number {
  // Native: a JavaScript loop over a 15 MiB result took the event loop for a second and more.
  // A lone surrogate counts 3 bytes, as its replacement character does once encoded.
  return Buffer.byteLength(text, "utf8");
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/** ⌈bytes/4⌉: the token estimate used everywhere a policy counts tokens. */
export function approxTokenCount(text: string): number {
  return approxTokensFromBytes(utf8Length(text));
}

export function approxTokensFromBytes(bytes: number): number {
  return Math.ceil(bytes / BYTES_PER_TOKEN);
}

export function approxBytesForTokens(tokens: number): number {
  return tokens * BYTES_PER_TOKEN;
}

export function byteBudget(policy: TruncationPolicy): number {
  return policy.mode === "bytes" ? policy.limit : approxBytesForTokens(policy.limit);
}

export function tokenBudget(policy: TruncationPolicy): number {
  return policy.mode === "tokens" ? policy.limit : approxTokensFromBytes(policy.limit);
}

/** The policy scaled by a factor and rounded up (the model gets policy × 1.2). */
export function scalePolicy(policy: TruncationPolicy, factor: number): TruncationPolicy {
  return { mode: policy.mode, limit: Math.ceil(policy.limit * factor) };
}

export function truncationMarker(mode: TruncationPolicy["mode"], removed: number): string {
  return mode === "tokens" ? `…${removed} tokens truncated…` : `…${removed} chars truncated…`;
}

export interface SplitText {
  prefix: string;
  suffix: string;
  /** Code points between the prefix and the suffix. */
  removedChars: number;
}

/**
 * The longest prefix within `prefixBytes` and the longest suffix within `suffixBytes`,
 * both on code-point boundaries and never overlapping. Only the kept ends are walked by
 * code point, so a long text costs little more than one pass to count what was removed.
 */
export function splitAtCharBoundaries(text: string, prefixBytes: number, suffixBytes: number): SplitText {
  let prefixEnd = 0;
  for (let used = 0; prefixEnd < text.length; ) {
    const units = unitsAt(text, prefixEnd);
    const bytes = units === 2 ? 4 : codePointBytes(text.charCodeAt(prefixEnd));
    if (used + bytes > prefixBytes) break;
    used += bytes;
    prefixEnd += units;
  }
  let suffixStart = text.length;
  for (let used = 0; suffixStart > prefixEnd; ) {
    const units = unitsBefore(text, suffixStart);
    const bytes = units === 2 ? 4 : codePointBytes(text.charCodeAt(suffixStart - 1));
    if (used + bytes > suffixBytes) break;
    used += bytes;
    suffixStart -= units;
  }
  return {
    prefix: detachedSlice(text, 0, prefixEnd),
    suffix: detachedSlice(text, suffixStart, text.length),
    removedChars: countCodePoints(text, prefixEnd, suffixStart),
  };
}

/**
 * A slice of a long text that does not hold on to it: V8 keeps the whole parent of a sliced
 * string alive, so a 12 KB preview of a 15 MiB result would keep 15 MiB in memory as long as
 * the preview lives (a reply remembered for its retries, an event awaiting its ack).
 */
function detachedSlice(text: string, start: number, end: number): string {
  const slice = text.slice(start, end);
  return text.length <= DETACH_ABOVE_UNITS ? slice : (JSON.parse(JSON.stringify(slice)) as string);
}
const DETACH_ABOVE_UNITS = 64 * 1024;

/** 2 when a surrogate pair starts at `i`, else 1. */
function unitsAt(text: string, i: number): number {
  const unit = text.charCodeAt(i);
  return unit >= 0xd800 && unit <= 0xdbff && isLowSurrogate(text.charCodeAt(i + 1)) ? 2 : 1;
}

/** 2 when a surrogate pair ends just before `end`, else 1. */
function unitsBefore(text: string, end: number): number {
  const unit = text.charCodeAt(end - 1);
  if (!isLowSurrogate(unit) || end < 2) return 1;
  const high = text.charCodeAt(end - 2);
  return high >= 0xd800 && high <= 0xdbff ? 2 : 1;
}

/** Code units minus the surrogate pairs wholly inside [start, end). */
function countCodePoints(text: string, start: number, end: number): number {
  // The regular expression scans natively: a loop of charCodeAt over a 15 MiB text is slow.
  const pair = /[\uD800-\uDBFF][\uDC00-\uDFFF]/g;
  pair.lastIndex = start;
  let pairs = 0;
  for (let match = pair.exec(text); match !== null && match.index + 2 <= end; match = pair.exec(text))
    pairs++;
  return end - start - pairs;
}

function truncateToBytes(text: string, maxBytes: number, mode: TruncationPolicy["mode"]): string {
  if (text === "") return "";
  const totalBytes = utf8Length(text);
  const removedUnits = (removedBytes: number, removedChars: number) =>
    mode === "tokens" ? approxTokensFromBytes(removedBytes) : removedChars;
  if (maxBytes <= 0) {
    return truncationMarker(mode, removedUnits(totalBytes, countCodePoints(text, 0, text.length)));
  }
  if (totalBytes <= maxBytes) return text;
  const prefixBytes = Math.floor(maxBytes / 2);
  const { prefix, suffix, removedChars } = splitAtCharBoundaries(text, prefixBytes, maxBytes - prefixBytes);
  // Tokens count the nominal overflow (total − budget), as the reference does.
  return prefix + truncationMarker(mode, removedUnits(totalBytes - maxBytes, removedChars)) + suffix;
}

/** Middle-truncates to `maxBytes` UTF-8 bytes; the marker counts removed characters. */
export function truncateMiddleChars(text: string, maxBytes: number): string {
  return truncateToBytes(text, maxBytes, "bytes");
}

/** Middle-truncates to `maxTokens` × 4 bytes; the marker counts removed tokens (⌈bytes/4⌉). */
export function truncateMiddleTokens(text: string, maxTokens: number): string {
  if (text === "") return "";
  if (maxTokens > 0 && utf8Length(text) <= approxBytesForTokens(maxTokens)) return text;
  return truncateToBytes(text, approxBytesForTokens(maxTokens), "tokens");
}

/** Truncates text to a policy: bytes mode counts chars removed, tokens mode tokens removed. */
export function truncateText(text: string, policy: TruncationPolicy): string {
  return policy.mode === "bytes"
    ? truncateMiddleChars(text, policy.limit)
    : truncateMiddleTokens(text, policy.limit);
}

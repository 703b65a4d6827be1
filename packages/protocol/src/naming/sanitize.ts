/**
 * The character rules of model-visible names (docs/reference-behavior.md §3.2) and the short
 * SHA-1 suffix that disambiguates them (§3.3).
 */
import { hash } from "node:crypto";

export const MCP_PREFIX = "mcp__";
export const NAME_DELIMITER = "__";
/** `_` plus 12 hex characters. */
export const HASH_SUFFIX_LENGTH = 13;

function isNameChar(unit: number): boolean {
  return (
    (unit >= 0x61 && unit <= 0x7a) || // a-z
    (unit >= 0x41 && unit <= 0x5a) || // A-Z
    (unit >= 0x30 && unit <= 0x39) || // 0-9
    unit === 0x5f // _
  );
}

/**
 * Every char outside `[A-Za-z0-9_]` becomes `_` (one per code point); empty becomes `_`.
 * A loop rather than a `/u` regex replace, which costs more than the rest of naming a tool.
 */
export function sanitizeName(name: string): string {
  let sanitized = "";
  let kept = 0;
  for (let i = 0; i < name.length; i += 1) {
    const unit = name.charCodeAt(i);
    if (isNameChar(unit)) continue;
    sanitized += `${name.slice(kept, i)}_`;
    // A surrogate pair is one code point, so one underscore.
    const next = i + 1 < name.length ? name.charCodeAt(i + 1) : 0;
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) i += 1;
    kept = i + 1;
  }
  if (kept === 0) return name === "" ? "_" : name;
  return sanitized + name.slice(kept);
}

/** `_` + the first 12 lowercase hex characters of SHA-1 over the UTF-8 bytes of `input`. */
export function nameHash(input: string): string {
  return `_${hash("sha1", input, "hex").slice(0, 12)}`;
}

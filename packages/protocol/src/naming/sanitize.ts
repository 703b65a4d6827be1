/**
 * The character rules of model-visible names (codex-mcp-behavior.md §3.2) and the short
 * SHA-1 suffix that disambiguates them (§3.3).
 */
import { hash } from "node:crypto";

export const MCP_PREFIX = "mcp__";
export const NAME_DELIMITER = "__";
/** `_` plus 12 hex characters. */
export const HASH_SUFFIX_LENGTH = 13;

const VALID_NAME = /^[A-Za-z0-9_]+$/;
const INVALID_CHAR = /[^A-Za-z0-9_]/gu;

/** Every char outside `[A-Za-z0-9_]` becomes `_` (one per code point); empty becomes `_`. */
export function sanitizeName(name: string): string {
  if (VALID_NAME.test(name)) return name;
  const sanitized = name.replace(INVALID_CHAR, "_");
  return sanitized === "" ? "_" : sanitized;
}

/** `_` + the first 12 lowercase hex characters of SHA-1 over the UTF-8 bytes of `input`. */
export function nameHash(input: string): string {
  return `_${hash("sha1", input, "hex").slice(0, 12)}`;
}

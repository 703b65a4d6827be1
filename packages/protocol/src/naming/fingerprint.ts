/**
 * The tool fingerprint of CONTRACT.md "Catalog": hex SHA-256 of the canonical JSON of the
 * fields a model is shown, so a caller can tell whether the tool it prepared against changed.
 * Every catalog build fingerprints every tool, so the writer below avoids per-value
 * `JSON.stringify` calls and `Array.prototype.sort` on the small key lists of JSON schemas.
 */
import { hash } from "node:crypto";
import type { RawTool } from "./types.js";

/** A string `JSON.stringify` would escape: quote, backslash, control char or surrogate. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

function quote(text: string): string {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`;
}

/** Omitted as an object member, `null` as an array element (as in `JSON.stringify`). */
function isSkipped(value: unknown): boolean {
  return value === undefined || typeof value === "function" || typeof value === "symbol";
}

/** Own enumerable keys by UTF-16 code unit; schema objects have a handful, often in order. */
function sortedKeys(record: object): string[] {
  const keys = Object.keys(record);
  for (let i = 1; i < keys.length; i += 1) {
    if (keys[i - 1]! > keys[i]!) return keys.length > 16 ? keys.sort() : insertionSort(keys);
  }
  return keys;
}

function insertionSort(keys: string[]): string[] {
  for (let i = 1; i < keys.length; i += 1) {
    const key = keys[i]!;
    let j = i - 1;
    for (; j >= 0 && keys[j]! > key; j -= 1) keys[j + 1] = keys[j]!;
    keys[j + 1] = key;
  }
  return keys;
}

function writeValue(value: unknown): string {
  switch (typeof value) {
    case "string":
      return quote(value);
    case "number":
      return Number.isFinite(value) ? `${value}` : "null";
    case "boolean":
      return value ? "true" : "false";
    case "object":
      if (value === null) return "null";
      return Array.isArray(value) ? writeArray(value) : writeObject(value as Record<string, unknown>);
    default:
      // undefined, functions and symbols become null; a bigint throws, as in JSON.stringify.
      return JSON.stringify(value) ?? "null";
  }
}

function writeArray(items: readonly unknown[]): string {
  let out = "[";
  for (let i = 0; i < items.length; i += 1) {
    if (i > 0) out += ",";
    out += writeValue(items[i]);
  }
  return `${out}]`;
}

function writeObject(record: Record<string, unknown>): string {
  let out = "";
  for (const key of sortedKeys(record)) {
    const member = record[key];
    if (isSkipped(member)) continue;
    out += `${out === "" ? "{" : ","}${quote(key)}:${writeValue(member)}`;
  }
  return out === "" ? "{}" : `${out}}`;
}

/**
 * JSON with object keys sorted (by UTF-16 code unit, as RFC 8785 does) at every depth and no
 * whitespace. `undefined` members are omitted and non-finite numbers become `null`, as in
 * `JSON.stringify`; `toJSON` methods are not called.
 */
export function canonicalJson(value: unknown): string {
  return writeValue(value);
}

/** The fields a model is shown, in canonical (sorted) order. */
const SHOWN_KEYS = ["annotations", "description", "inputSchema", "name", "outputSchema", "title"] as const;

export function toolFingerprint(tool: RawTool): string {
  let out = "";
  for (const key of SHOWN_KEYS) {
    const member = tool[key];
    if (isSkipped(member)) continue;
    out += `${out === "" ? "{" : ","}"${key}":${writeValue(member)}`;
  }
  return hash("sha256", out === "" ? "{}" : `${out}}`, "hex");
}

/**
 * The tool fingerprint of CONTRACT.md "Catalog": hex SHA-256 of the canonical JSON of the
 * fields a model is shown, so a caller can tell whether the tool it prepared against changed.
 */
import { hash } from "node:crypto";
import type { RawTool } from "./types.js";

/**
 * JSON with object keys sorted (by UTF-16 code unit, as RFC 8785 does) at every depth and no
 * whitespace. `undefined` members are omitted and non-finite numbers become `null`, as in
 * `JSON.stringify`.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i += 1) {
      if (i > 0) out += ",";
      out += value[i] === undefined ? "null" : canonicalJson(value[i]);
    }
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  let out = "{";
  for (const key of Object.keys(record).sort()) {
    const member = record[key];
    if (member === undefined || typeof member === "function" || typeof member === "symbol") continue;
    if (out.length > 1) out += ",";
    out += `${JSON.stringify(key)}:${canonicalJson(member)}`;
  }
  return `${out}}`;
}

export function toolFingerprint(tool: RawTool): string {
  const shown = {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema,
    outputSchema: tool.outputSchema,
    annotations: tool.annotations,
  };
  return hash("sha256", canonicalJson(shown), "hex");
}

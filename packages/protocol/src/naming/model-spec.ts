/**
 * What a model is shown about a namespace and a tool's parameters (codex-mcp-behavior.md §3.4,
 * checklist 20-21): the namespace description and the input-schema fixes.
 */
import { takeBytesAtCharBoundary, trimRust } from "./text.js";
import type { JsonObject } from "./types.js";

export const MAX_NAMESPACE_DESCRIPTION_BYTES = 512 * 1024;

/** Trimmed server instructions, else `Tools for working with <connector>.`, else `""`; capped. */
export function namespaceDescription(instructions?: string, connectorName?: string): string {
  const trimmed = trimRust(instructions ?? "");
  const connector = trimRust(connectorName ?? "");
  const description =
    trimmed !== "" ? trimmed : connector !== "" ? `Tools for working with ${connector}.` : "";
  return takeBytesAtCharBoundary(description, MAX_NAMESPACE_DESCRIPTION_BYTES);
}

export type ModelInputSchema =
  | { readonly ok: true; readonly schema: JsonObject }
  | { readonly ok: false; readonly reason: string };

/**
 * The parameters a model is given: `properties` defaults to `{}` when missing or null, and a
 * schema whose root type is `"null"` describes no callable input, so the tool is skipped.
 */
export function modelInputSchema(schema: JsonObject): ModelInputSchema {
  if (schema.type === "null") {
    return {
      ok: false,
      reason: 'the input schema has root type "null", so no arguments could ever match; the tool is skipped',
    };
  }
  if (schema.properties !== undefined && schema.properties !== null) return { ok: true, schema };
  return { ok: true, schema: { ...schema, properties: {} } };
}

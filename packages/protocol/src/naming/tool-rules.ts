/**
 * Per-tool rules read from the tool itself (docs/reference-behavior.md §2.6, §3.1, §3.5): model
 * visibility, parallel calls, and dropping the `_meta` keys a server could use to pose as a
 * connector. The enabled/disabled filter is the catalog's (services/catalog tool-filter.ts).
 */
import type { JsonObject, RawTool } from "./types.js";

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Visible unless `_meta.ui.visibility` is an array without `"model"` (e.g. `["app"]`). */
export function isModelVisible(tool: RawTool): boolean {
  const ui = tool._meta?.ui;
  const visibility = isObject(ui) ? ui.visibility : undefined;
  return !Array.isArray(visibility) || visibility.includes("model");
}

/** Parallel calls are allowed when the server opts in or the tool says it only reads. */
export function supportsParallelCalls(tool: RawTool, serverOptIn: boolean): boolean {
  return serverOptIn || tool.annotations?.readOnlyHint === true;
}

/** Connector identity comes from trusted config, never from what a server put in `_meta`. */
export const UNTRUSTED_META_KEYS: readonly string[] = [
  "connector_id",
  "connector_name",
  "connector_display_name",
  "connector_description",
  "connectorDescription",
];

/** The tool without the untrusted `_meta` keys; the same object when it has none of them. */
export function withoutUntrustedMeta(tool: RawTool): RawTool {
  const meta = tool._meta;
  if (!isObject(meta) || !UNTRUSTED_META_KEYS.some((key) => Object.hasOwn(meta, key))) return tool;
  const kept = Object.fromEntries(Object.entries(meta).filter(([key]) => !UNTRUSTED_META_KEYS.includes(key)));
  return { ...tool, _meta: kept };
}

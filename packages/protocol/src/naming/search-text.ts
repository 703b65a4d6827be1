/**
 * The text tool search indexes for one tool (docs/reference-behavior.md §3.5): names first, then
 * the human text, then the input property names. The reference also indexes the [apps]
 * connector name and plugin names, which toolbus does not have.
 */
import { compareUtf8, trimRust } from "./text.js";
import type { JsonObject } from "./types.js";

export interface SearchTextInput {
  readonly flatName: string;
  readonly callableName: string;
  readonly rawName: string;
  readonly server: string;
  readonly title?: string | undefined;
  readonly description?: string | undefined;
  readonly namespaceDescription?: string | undefined;
  readonly inputSchema?: JsonObject | undefined;
}

function propertyNames(schema: JsonObject | undefined): string[] {
  const properties = schema?.properties;
  if (typeof properties !== "object" || properties === null || Array.isArray(properties)) return [];
  return Object.keys(properties).sort(compareUtf8);
}

/** Space-joined; optional text is trimmed and left out when blank. */
export function searchText(entry: SearchTextInput): string {
  const optional = [entry.title, entry.description, entry.namespaceDescription]
    .map((text) => trimRust(text ?? ""))
    .filter((text) => text !== "");
  return [
    entry.flatName,
    entry.callableName,
    entry.rawName,
    entry.server,
    ...optional,
    ...propertyNames(entry.inputSchema),
  ].join(" ");
}

/**
 * The MCP Apps resource a call's item points a UI at (docs/reference-behavior.md §6): the tool's
 * `_meta.ui.resourceUri`, else `_meta["ui/resourceUri"]`, else `_meta["openai/outputTemplate"]`.
 */
import { isRecord } from "./json.js";

export function mcpAppResourceUri(toolMeta: unknown): string | undefined {
  if (!isRecord(toolMeta)) return undefined;
  const ui = toolMeta.ui;
  const candidates = [
    isRecord(ui) ? ui.resourceUri : undefined,
    toolMeta["ui/resourceUri"],
    toolMeta["openai/outputTemplate"],
  ];
  return candidates.find((value): value is string => typeof value === "string");
}

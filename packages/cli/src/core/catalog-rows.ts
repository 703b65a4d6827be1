/** The `servers` and `tools` tables: their columns and one row per server or tool. */
import type { CatalogServerSummary, ToolEntry } from "@toolbus/protocol";
import type { Column } from "./table.js";
import { displayName } from "./tool-name.js";

export const SERVER_COLUMNS: readonly Column[] = [
  { header: "name" },
  { header: "status" },
  { header: "error", flex: true },
  { header: "required" },
  { header: "revision", align: "right" },
];

export function serverRows(servers: readonly CatalogServerSummary[]): string[][] {
  return servers.map((s) => [s.name, s.status, s.error ?? "", s.required ? "yes" : "no", String(s.revision)]);
}

/**
 * A tool by the name MCP clients see (the one `toolbus call` takes), its server, and its
 * description in all the width left; with `exposure` (the listing of every tool), how it reaches
 * the model, `hidden` included.
 */
export function toolColumns(exposure: boolean): Column[] {
  return [
    { header: "name" },
    { header: "server" },
    { header: "description", flex: true, minWidth: 20 },
    ...(exposure ? [{ header: "exposure" }] : []),
  ];
}

export function toolRows(tools: readonly ToolEntry[], exposure: boolean): string[][] {
  return tools.map((t) => [displayName(t), t.server, t.description, ...(exposure ? [t.exposure] : [])]);
}

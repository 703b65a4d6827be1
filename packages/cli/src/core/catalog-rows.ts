/** The `servers` and `tools` tables: their columns and one row per server or tool. */
import type { CatalogServerSummary, ToolEntry } from "@toolbus/protocol";
import type { Column } from "./table.js";

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

export const TOOL_COLUMNS: readonly Column[] = [
  { header: "flatName" },
  { header: "server" },
  { header: "tool" },
  { header: "description", flex: true, minWidth: 12 },
  { header: "exposure" },
];

export function toolRows(tools: readonly ToolEntry[]): string[][] {
  return tools.map((t) => [t.flatName, t.server, t.rawName, t.description, t.exposure]);
}

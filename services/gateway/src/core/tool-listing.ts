/**
 * What `tools/list` answers for a table of exposed names, and whether a new catalog changed
 * that answer (the only reason to send `notifications/tools/list_changed`).
 */
import type { ExposedNameTable } from "./exposed-names.js";

/** One MCP `Tool` as the gateway lists it. */
export interface ListedTool {
  name: string;
  title?: string;
  description: string;
  inputSchema: { type: "object"; [key: string]: unknown };
  outputSchema?: { type: "object"; [key: string]: unknown };
  annotations?: Record<string, unknown>;
}

export function listedTools(table: ExposedNameTable): ListedTool[] {
  return table.tools.map(({ exposedName, entry }) => ({
    name: exposedName,
    ...(entry.title !== undefined ? { title: entry.title } : {}),
    description: entry.description,
    inputSchema: objectSchema(entry.inputSchema),
    ...(entry.outputSchema ? { outputSchema: objectSchema(entry.outputSchema) } : {}),
    ...(entry.annotations ? { annotations: { ...entry.annotations } } : {}),
  }));
}

/** MCP requires `type: "object"` at the root of both schemas; everything else is passed as listed. */
function objectSchema(schema: Record<string, unknown>): ListedTool["inputSchema"] {
  return { ...schema, type: "object" };
}

/**
 * A key that changes exactly when what a client would list changes: names and everything the
 * tools carry. Two catalogs with equal keys give byte-identical `tools/list` answers.
 */
export function listingKey(tools: readonly ListedTool[]): string {
  return JSON.stringify(tools);
}

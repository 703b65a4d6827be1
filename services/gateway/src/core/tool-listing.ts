/**
 * What `tools/list` answers for a table of exposed names (and the resource tools, when the
 * gateway offers them), and whether a new catalog changed that answer (the only reason to send
 * `notifications/tools/list_changed`).
 */
import { type ExposedNameTable, RESOURCE_TOOL_SPECS } from "@toolbus/protocol";

/** One MCP `Tool` as the gateway lists it. */
export interface ListedTool {
  name: string;
  title?: string;
  description: string;
  inputSchema: { type: "object"; [key: string]: unknown };
  outputSchema?: { type: "object"; [key: string]: unknown };
  annotations?: Record<string, unknown>;
  /** As the server declared them (MCP Apps' `_meta.ui.resourceUri` among them): clients render from these. */
  icons?: unknown[];
  _meta?: Record<string, unknown>;
}

/**
 * The resource tools (when offered) first, as the reference lists them before MCP tools, then
 * every catalog tool under its exposed name.
 */
export function listedTools(table: ExposedNameTable, resourceTools = false): ListedTool[] {
  const upstream = table.tools.map(({ exposedName, entry }) => ({
    name: exposedName,
    ...(entry.title !== undefined ? { title: entry.title } : {}),
    description: entry.description,
    inputSchema: objectSchema(entry.inputSchema),
    ...(entry.outputSchema ? { outputSchema: objectSchema(entry.outputSchema) } : {}),
    ...(entry.annotations ? { annotations: { ...entry.annotations } } : {}),
    ...(entry.icons ? { icons: entry.icons } : {}),
    ...(entry._meta ? { _meta: entry._meta } : {}),
  }));
  return resourceTools ? [...RESOURCE_TOOLS, ...upstream] : upstream;
}

/** Read-only: they list and read what servers offer, and run nothing. */
const RESOURCE_TOOLS: readonly ListedTool[] = RESOURCE_TOOL_SPECS.map((spec) => ({
  name: spec.name,
  description: spec.description,
  inputSchema: structuredClone(spec.inputSchema) as ListedTool["inputSchema"],
  annotations: { readOnlyHint: true },
}));

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

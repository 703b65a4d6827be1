/**
 * The resource tools (docs/reference-behavior.md §8): `list_mcp_resources`,
 * `list_mcp_resource_templates` and `read_mcp_resource`, through which a model lists and reads
 * the MCP servers' resources (many MCP clients never read resources on their own). The
 * dispatcher serves them (`toolbus.dispatch.call` with the name as `tool`); the gateway lists
 * them. Names, descriptions and parameters are the reference's.
 */
import type { CallableRef } from "./schemas/dispatch.js";

export const ResourceToolName = {
  listResources: "list_mcp_resources",
  listResourceTemplates: "list_mcp_resource_templates",
  readResource: "read_mcp_resource",
} as const;
export type ResourceToolName = (typeof ResourceToolName)[keyof typeof ResourceToolName];

export const RESOURCE_TOOL_NAMES: readonly ResourceToolName[] = Object.freeze(
  Object.values(ResourceToolName),
);

/** A flat tool name that names a resource tool (a catalog flat name never does: it has `__`). */
export function isResourceToolName(tool: CallableRef): tool is ResourceToolName {
  return typeof tool === "string" && (RESOURCE_TOOL_NAMES as readonly string[]).includes(tool);
}

export interface ResourceToolSpec {
  readonly name: ResourceToolName;
  readonly description: string;
  /** Non-strict, no other properties; property names sorted as the reference sends them. */
  readonly inputSchema: {
    readonly type: "object";
    readonly properties: Readonly<Record<string, { readonly type: "string"; readonly description: string }>>;
    readonly required?: readonly string[];
    readonly additionalProperties: false;
  };
}

// biome-ignore format: the reference's texts, one per line
export const RESOURCE_TOOL_SPECS: readonly ResourceToolSpec[] = Object.freeze<readonly ResourceToolSpec[]>([
  {
    name: ResourceToolName.listResources,
    description: "Lists resources provided by MCP servers. Resources allow servers to share data that provides context to language models, such as files, database schemas, or application-specific information. Prefer resources over web search when possible.",
    inputSchema: {
      type: "object",
      properties: {
        cursor: { type: "string", description: "Opaque cursor returned by a previous list_mcp_resources call for the same server." },
        server: { type: "string", description: "Optional MCP server name. When omitted, lists resources from every configured server." },
      },
      additionalProperties: false,
    },
  },
  {
    name: ResourceToolName.listResourceTemplates,
    description: "Lists resource templates provided by MCP servers. Parameterized resource templates allow servers to share data that takes parameters and provides context to language models, such as files, database schemas, or application-specific information. Prefer resource templates over web search when possible.",
    inputSchema: {
      type: "object",
      properties: {
        cursor: { type: "string", description: "Opaque cursor returned by a previous list_mcp_resource_templates call for the same server." },
        server: { type: "string", description: "Optional MCP server name. When omitted, lists resource templates from all configured servers." },
      },
      additionalProperties: false,
    },
  },
  {
    name: ResourceToolName.readResource,
    description: "Read a specific resource from an MCP server given the server name and resource URI.",
    inputSchema: {
      type: "object",
      properties: {
        server: { type: "string", description: "MCP server name exactly as configured. Must match the 'server' field returned by list_mcp_resources." },
        uri: { type: "string", description: "Resource URI to read. Must be one of the URIs returned by list_mcp_resources." },
      },
      required: ["server", "uri"],
      additionalProperties: false,
    },
  },
]);

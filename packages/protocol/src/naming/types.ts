/**
 * The shapes the naming rules read and produce: a raw MCP tool as a server listed it, one
 * catalog input (which server listed it), and the normalized tool with its callable identity.
 */

/** A JSON object as it arrives off the wire; values are not trusted to have any shape. */
export type JsonObject = { readonly [key: string]: unknown };

/** MCP tool annotations; only `readOnlyHint` changes a naming-side decision (parallel calls). */
export interface ToolAnnotations {
  readonly title?: string | undefined;
  readonly readOnlyHint?: boolean | undefined;
  readonly destructiveHint?: boolean | undefined;
  readonly idempotentHint?: boolean | undefined;
  readonly openWorldHint?: boolean | undefined;
  readonly [key: string]: unknown;
}

/** A tool exactly as an MCP server's `tools/list` returned it (unknown fields kept). */
export interface RawTool {
  readonly name: string;
  readonly title?: string | undefined;
  readonly description?: string | undefined;
  readonly inputSchema?: JsonObject | undefined;
  readonly outputSchema?: JsonObject | undefined;
  readonly annotations?: ToolAnnotations | undefined;
  readonly _meta?: JsonObject | undefined;
  readonly [key: string]: unknown;
}

/** One listed tool and where it came from. */
export interface CatalogInput {
  /** The configured server name: the raw route, sent back on the wire. */
  readonly server: string;
  readonly tool: RawTool;
  /** Trusted connector identity (never read from the tool's own `_meta`). */
  readonly connectorId?: string | undefined;
  /** The namespace before sanitizing; defaults to the server name. */
  readonly rawNamespace?: string | undefined;
}

export interface NamingOptions {
  /** Byte limit of `callableNamespace + "__" + callableName`; default 64, at least 20. 128 is Codex. */
  readonly nameLimit?: number | undefined;
  /** Give every namespace the `mcp__` prefix (default true). */
  readonly prefixMcp?: boolean | undefined;
  /** Servers whose namespace never gets the `mcp__` prefix. */
  readonly nonPrefixedServers?: readonly string[] | undefined;
}

/** A tool with its model-facing identity; output order is bytewise by `toolId`. */
export interface NormalizedTool {
  readonly server: string;
  /** `tool.name`: what goes on the wire to the MCP server. */
  readonly rawName: string;
  readonly callableNamespace: string;
  readonly callableName: string;
  /** `callableNamespace + "__" + callableName`: unique over the catalog, at most `nameLimit` bytes. */
  readonly flatName: string;
  readonly hookName: string;
  readonly fingerprint: string;
  /** The raw tool minus the untrusted connector keys of `_meta`. */
  readonly tool: RawTool;
  /** `server⟨NUL⟩rawNamespace⟨NUL⟩connectorId⟨NUL⟩rawName⟨NUL⟩rawName`: the raw identity. */
  readonly toolId: string;
  readonly connectorId?: string;
}

export interface NormalizedCatalog {
  readonly tools: NormalizedTool[];
  readonly warnings: string[];
}

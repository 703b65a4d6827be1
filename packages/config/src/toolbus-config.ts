/** The one config object every service reads, and how it is sealed once built. */
import type { McpServerConfig } from "./mcp-server.js";
import type { ApprovalsConfig, BusConfig, CatalogConfig, GatewayConfig, MemoryConfig } from "./tables.js";
import type { ViewConfig } from "./views.js";

/** Where the config came from, for the start-up log line. */
export type ConfigSource = { kind: "file"; path: string; format: "toml" | "mcp_json" } | { kind: "demo" };

export interface ToolbusConfig {
  source: ConfigSource;
  /** By configured name, in file order. */
  mcpServers: Record<string, McpServerConfig>;
  gateway: GatewayConfig;
  catalog: CatalogConfig;
  approvals: ApprovalsConfig;
  memory: MemoryConfig;
  bus: BusConfig;
  /** `[views.<name>]`, by name: the catalog views served at `/mcp/<name>`. */
  views: Record<string, ViewConfig>;
}

/** Freezes the whole tree: a service that tries to change its config at run time fails loudly. */
export function sealConfig(config: ToolbusConfig): ToolbusConfig {
  return deepFreeze(config);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

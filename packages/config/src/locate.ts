/**
 * Which config file to load (`--config`, else `TOOLBUS_CONFIG`, else `./toolbus.toml`, else a
 * `./.mcp.json` as Claude Code and Cursor keep it, else the demo), and env overrides.
 */
import { resolve } from "node:path";
import type { Env } from "./http-headers.js";
import { ConfigFileError } from "./problems.js";
import { sealConfig, type ToolbusConfig } from "./toolbus-config.js";

export const DEFAULT_CONFIG_FILE = "toolbus.toml";
/** The project's MCP servers as Claude Code and Cursor keep them: used when there is no toolbus.toml. */
export const PROJECT_MCP_JSON = ".mcp.json";

export type ConfigLocation =
  | { kind: "file"; path: string; namedBy: "--config" | "TOOLBUS_CONFIG" | "default" }
  | { kind: "demo" };

export interface LocateOptions {
  /** From `--config`. */
  path?: string | undefined;
  env: Env;
  /** Relative paths are resolved against it. */
  cwd: string;
}

/** `exists` is the only question asked of the file system. */
export function locateConfig(
  { path, env, cwd }: LocateOptions,
  exists: (path: string) => boolean,
): ConfigLocation {
  if (path !== undefined && path !== "")
    return { kind: "file", path: resolve(cwd, path), namedBy: "--config" };
  const fromEnv = env.TOOLBUS_CONFIG;
  if (fromEnv !== undefined && fromEnv !== "") {
    return { kind: "file", path: resolve(cwd, fromEnv), namedBy: "TOOLBUS_CONFIG" };
  }
  for (const name of [DEFAULT_CONFIG_FILE, PROJECT_MCP_JSON]) {
    const local = resolve(cwd, name);
    if (exists(local)) return { kind: "file", path: local, namedBy: "default" };
  }
  return { kind: "demo" };
}

/** `.json` files are the `mcpServers` format; anything else is toolbus.toml. */
export function configFormat(path: string): "toml" | "mcp_json" {
  return path.toLowerCase().endsWith(".json") ? "mcp_json" : "toml";
}

/** `TOOLBUS_HTTP_PORT` replaces `[gateway] port`. */
export function applyEnvOverrides(config: ToolbusConfig, env: Env): ToolbusConfig {
  const port = env.TOOLBUS_HTTP_PORT;
  if (port === undefined || port === "") return config;
  const parsed = /^\d+$/.test(port) ? Number(port) : Number.NaN;
  if (!(parsed >= 0 && parsed <= 65535)) {
    throw new ConfigFileError("TOOLBUS_HTTP_PORT", [
      { at: "", message: `must be a port from 0 to 65535, got ${JSON.stringify(port)}` },
    ]);
  }
  return sealConfig({ ...config, gateway: { ...config.gateway, port: parsed } });
}

/** Reading the config file named by --config / TOOLBUS_CONFIG / ./toolbus.toml: the only I/O in this package. */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { demoConfig } from "./demo.js";
import { applyEnvOverrides, configFormat, type LocateOptions, locateConfig } from "./locate.js";
import { parseMcpJson } from "./mcp-json.js";
import type { StdioCommand } from "./mcp-server.js";
import { ConfigFileError } from "./problems.js";
import type { ToolbusConfig } from "./toolbus-config.js";
import { parseToolbusToml } from "./toolbus-toml.js";

export interface LoadToolbusConfigOptions extends LocateOptions {
  /** How to start server-everything, asked only when no config file is found (the demo config). */
  demoServer?: () => StdioCommand;
}

/** Throws ConfigFileError (every problem of the file) or, with no file and no `demoServer`, an Error saying what to do. */
export async function loadToolbusConfig(options: LoadToolbusConfigOptions): Promise<ToolbusConfig> {
  const location = locateConfig(options, existsSync);
  if (location.kind === "demo") {
    if (options.demoServer === undefined) {
      throw new Error(
        "No toolbus config found: pass --config <path>, set TOOLBUS_CONFIG, or create ./toolbus.toml",
      );
    }
    return applyEnvOverrides(demoConfig(options.demoServer()), options.env);
  }
  const { path, namedBy } = location;
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as Error).message;
    const source = namedBy === "default" ? "" : ` (named by ${namedBy})`;
    throw new ConfigFileError(path, [{ at: "", message: `cannot read the config file${source}: ${reason}` }]);
  }
  const config =
    configFormat(path) === "mcp_json" ? parseMcpJson(text, { path }) : parseToolbusToml(text, { path });
  return applyEnvOverrides(config, options.env);
}

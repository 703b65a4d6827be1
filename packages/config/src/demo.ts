/** The built-in config used when no file is given: the MCP "everything" test server over stdio. */
import { commonDefaults, type StdioCommand } from "./mcp-server.js";
import { defaultTables } from "./tables.js";
import { sealConfig, type ToolbusConfig } from "./toolbus-config.js";

export const DEMO_SERVER_NAME = "everything";

/**
 * `everything` is how to start the installed `@modelcontextprotocol/server-everything` (resolved by the caller,
 * which depends on it; `npx` is not an option offline), e.g. `{ command: process.execPath, args: [binPath, "stdio"] }`.
 */
export function demoConfig(everything: StdioCommand): ToolbusConfig {
  return sealConfig({
    source: { kind: "demo" },
    mcpServers: {
      [DEMO_SERVER_NAME]: {
        ...commonDefaults(DEMO_SERVER_NAME),
        transport: "stdio",
        command: everything.command,
        args: [...everything.args],
        env: {},
        envVars: [],
      },
    },
    ...defaultTables(),
  });
}

/** toolbus.toml text → ToolbusConfig, or a ConfigFileError naming every problem in the file. */
import { dirname, isAbsolute, join } from "node:path";
import { parse, TomlError } from "smol-toml";
import type { McpServerConfig } from "./mcp-server.js";
import {
  ConfigFileError,
  type ConfigProblem,
  configErrorMap,
  describeValue,
  issuesToProblems,
  problem,
} from "./problems.js";
import { TablesSchema } from "./tables.js";
import { isTable, parseTomlServer } from "./toml-server.js";
import { sealConfig, type ToolbusConfig } from "./toolbus-config.js";

export interface ParseOptions {
  /** The file the text came from: named in problems, and the base of relative paths in it. */
  path: string;
}

/** Throws ConfigFileError listing every problem (all servers, all fields). */
export function parseToolbusToml(text: string, { path }: ParseOptions): ToolbusConfig {
  const document = parseDocument(text, path);
  const problems: ConfigProblem[] = [];
  const servers: [string, McpServerConfig][] = [];

  const rawServers = document.mcp_servers;
  if (isTable(rawServers)) {
    for (const [name, table] of Object.entries(rawServers)) {
      const parsed = parseTomlServer(name, table, ["mcp_servers", name]);
      if (parsed.ok) servers.push([name, parsed.server]);
      else problems.push(...parsed.problems);
    }
  } else if (rawServers !== undefined) {
    problems.push(problem(["mcp_servers"], `expected a table, got ${describeValue(rawServers, "a table")}`));
  }

  const tables = TablesSchema.safeParse(document, { error: configErrorMap("a table") });
  if (!tables.success) problems.push(...issuesToProblems(tables.error.issues, []));
  else {
    problems.push(...prefixListProblems(tables.data.catalog, rawServers));
    for (const view of Object.values(tables.data.views)) {
      for (const [index, server] of view.servers.entries()) {
        // A plain name (no glob) that names no server is a typo that would hide every tool.
        if (!/[*?[\]{}!]/.test(server) && !servers.some(([name]) => name === server)) {
          problems.push(
            problem(
              ["views", view.name, "servers", String(index)],
              `names no configured server (${JSON.stringify(server)}); the servers are ${servers.map(([name]) => name).join(", ") || "none"}`,
            ),
          );
        }
      }
    }
  }

  if (problems.length > 0 || !tables.success) throw new ConfigFileError(path, problems);
  const { gateway, catalog, approvals, memory, bus, views } = tables.data;
  const { hooksPath } = approvals;
  const { serversDir } = catalog;
  return sealConfig({
    source: { kind: "file", path, format: "toml" },
    mcpServers: Object.fromEntries(servers),
    gateway,
    catalog: {
      ...catalog,
      ...(serversDir === undefined ? {} : { serversDir: besideFile(path, serversDir) }),
    },
    approvals: {
      ...approvals,
      ...(hooksPath === undefined ? {} : { hooksPath: besideFile(path, hooksPath) }),
    },
    memory,
    bus,
    views,
  });
}

/** A path in the file, relative to the file's folder. */
function besideFile(file: string, path: string): string {
  return isAbsolute(path) ? path : join(dirname(file), path);
}

function parseDocument(text: string, path: string): Record<string, unknown> {
  try {
    return parse(text);
  } catch (error) {
    if (!(error instanceof TomlError)) throw error;
    // smol-toml's message carries a multi-line code excerpt; its first line and the position are enough here.
    const reason = (error.message.split("\n")[0] ?? "").replace(/^Invalid TOML document: /, "");
    throw new ConfigFileError(path, [
      { at: "", message: `invalid TOML at line ${error.line}, column ${error.column}: ${reason}` },
    ]);
  }
}

/** `[catalog] non_prefixed_servers` must name configured servers, and only means something with the prefix on. */
function prefixListProblems(
  catalog: { prefixMcp: boolean; nonPrefixedServers?: string[] },
  rawServers: unknown,
): ConfigProblem[] {
  const listed = catalog.nonPrefixedServers;
  if (listed === undefined) return [];
  const at = ["catalog", "non_prefixed_servers"];
  if (!catalog.prefixMcp) {
    return [
      problem(
        at,
        "has no effect with prefix_mcp = false (no server is prefixed); remove it or set prefix_mcp = true",
      ),
    ];
  }
  const known = isTable(rawServers) ? rawServers : {};
  return listed
    .filter((server) => !Object.hasOwn(known, server))
    .map((server) => problem(at, `names \`${server}\`, which is not a server in [mcp_servers]`));
}

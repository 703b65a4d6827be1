/**
 * What `pnpm start` tells a person: what it is doing while it starts (the first start takes a
 * while), then, once toolbus runs, the configuration in use, each server that failed with its
 * error and what to do, and where everything is.
 */
import type { ConfigSource } from "@toolbus/config";
import type { StartupCompleteEvent } from "@toolbus/protocol";

/** The steps of a start a person waits for, each said before it begins. */
export const startingSteps = {
  nats: "starting its own NATS (nats-server, loopback only, with credentials)…",
  database: (created: boolean) =>
    created
      ? "opening the embedded Postgres in .toolbus/pglite…"
      : "creating the embedded Postgres in .toolbus/pglite (only the first start; about 20 s)…",
  servers: (names: readonly string[]) =>
    names.length === 0
      ? "starting toolbus's services (no MCP server is configured)…"
      : `starting toolbus's services and ${names.length} MCP server(s): ${names.join(", ")}…`,
};

/** The configuration line: the file in use, or the demo and how to use one's own. */
export function configLine(source: ConfigSource): string {
  return source.kind === "file"
    ? `  config         ${source.path}`
    : "  config         the demo (server-everything): write a toolbus.toml or a .mcp.json here, or pass --config";
}

/** One line per failed server: its error, and the next step. */
export function failedLines(summary: Pick<StartupCompleteEvent, "failed">): string[] {
  return summary.failed.map(
    ({ server, error }) =>
      `  failed         ${server}: ${oneLine(error)} (fix its [mcp_servers.${server}] table and start again; \`toolbus servers\` shows its status)`,
  );
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 300 ? `${line.slice(0, 299)}…` : line;
}

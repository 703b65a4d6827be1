/**
 * What `pnpm start` tells a person once toolbus runs: the configuration in use, each server that
 * failed with its error and what to do, and where everything is.
 */
import type { ConfigSource } from "@toolbus/config";
import type { StartupCompleteEvent } from "@toolbus/protocol";

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

/** `toolbus servers`: the catalog's servers with status, error, required and revision. */
import { CatalogSnapshotSchema } from "@toolbus/protocol";
import { paintStatus } from "../core/ansi.js";
import { SERVER_COLUMNS, serverRows } from "../core/catalog-rows.js";
import { DEFAULT_TIMEOUT_SEC } from "../core/commands.js";
import { ExitCode } from "../core/exit-codes.js";
import { renderTable, tableWidth } from "../core/table.js";
import { type CommandContext, out, printJson, timeoutOr } from "./context.js";

export async function runServers(ctx: CommandContext): Promise<ExitCode> {
  const bus = await ctx.bus();
  const snapshot = await bus.request(bus.subjects.catalogGet, { exposure: "all" }, CatalogSnapshotSchema, {
    timeoutMs: timeoutOr(ctx, DEFAULT_TIMEOUT_SEC),
  });
  if (ctx.json) {
    printJson(ctx, snapshot.servers);
    return ExitCode.ok;
  }
  if (snapshot.servers.length === 0) {
    out(ctx, "No MCP servers are configured.");
    return ExitCode.ok;
  }
  const status = SERVER_COLUMNS.findIndex((c) => c.header === "status");
  const lines = renderTable(SERVER_COLUMNS, serverRows(snapshot.servers), {
    maxWidth: tableWidth(ctx.terminal.stdout, ctx.terminal.env),
    paint: (column, text) => (column === status ? paintStatus(ctx.paint, text) : text),
    paintHeader: ctx.paint.bold,
  });
  out(ctx, ...lines);
  return ExitCode.ok;
}

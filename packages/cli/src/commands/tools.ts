/** `toolbus tools [query]`: the model's view of the catalog, or a search of it. */
import {
  CatalogSearchResultSchema,
  CatalogSnapshotSchema,
  MAX_SEARCH_LIMIT,
  type ToolEntry,
} from "@toolbus/protocol";
import { TOOL_COLUMNS, toolRows } from "../core/catalog-rows.js";
import { DEFAULT_TIMEOUT_SEC, parseCount } from "../core/commands.js";
import { ExitCode } from "../core/exit-codes.js";
import { CliError } from "../core/failure.js";
import { renderTable, tableWidth } from "../core/table.js";
import { type CommandContext, out, printJson, timeoutOr } from "./context.js";

export async function runTools(ctx: CommandContext): Promise<ExitCode> {
  const query = ctx.positionals.join(" ").trim();
  const limit = ctx.options.limit;
  if (typeof limit === "string" && query === "") {
    throw new CliError({
      kind: "usage",
      message: "--limit applies to a search: give a query",
      command: "tools",
    });
  }
  if (ctx.options.all === true && query !== "") {
    throw new CliError({
      kind: "usage",
      message: "--all applies to the listing, not to a search",
      command: "tools",
    });
  }
  const parsedLimit = typeof limit === "string" ? parseCount("limit", limit, MAX_SEARCH_LIMIT) : undefined;
  if (parsedLimit && !parsedLimit.ok)
    throw new CliError({ kind: "usage", message: parsedLimit.message, command: "tools" });

  const bus = await ctx.bus();
  const timeoutMs = timeoutOr(ctx, DEFAULT_TIMEOUT_SEC);
  let tools: ToolEntry[];
  if (query === "") {
    const exposure = ctx.options.all === true ? "all" : "model";
    tools = (await bus.request(bus.subjects.catalogGet, { exposure }, CatalogSnapshotSchema, { timeoutMs }))
      .tools;
  } else {
    const request = { query, ...(parsedLimit?.ok ? { limit: parsedLimit.value } : {}) };
    tools = (await bus.request(bus.subjects.catalogSearch, request, CatalogSearchResultSchema, { timeoutMs }))
      .tools;
  }
  if (ctx.json) {
    printJson(ctx, tools);
    return ExitCode.ok;
  }
  if (tools.length === 0) {
    out(ctx, query === "" ? "No tools are available." : `No tools match ${JSON.stringify(query)}.`);
    return ExitCode.ok;
  }
  out(
    ctx,
    ...renderTable(TOOL_COLUMNS, toolRows(tools), {
      maxWidth: tableWidth(ctx.terminal.stdout, ctx.terminal.env),
      paintHeader: ctx.paint.bold,
    }),
  );
  return ExitCode.ok;
}

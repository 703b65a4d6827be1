/**
 * `toolbus tools [query]`: the model's view of the catalog, or a search of it, each tool by the
 * name MCP clients see (`withExposedNames`, named over the whole model view).
 */
import {
  CatalogSearchResultSchema,
  CatalogSnapshotSchema,
  MAX_SEARCH_LIMIT,
  type ToolEntry,
  withExposedNames,
} from "@toolbus/protocol";
import { toolColumns, toolRows } from "../core/catalog-rows.js";
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
  const all = ctx.options.all === true;
  const exposure = all ? "all" : "model";
  // The exposed names are those of the whole model view, whatever is listed.
  const catalog = withExposedNames(
    (await bus.request(bus.subjects.catalogGet, { exposure }, CatalogSnapshotSchema, { timeoutMs })).tools,
  );
  let tools: ToolEntry[] = catalog;
  if (query !== "") {
    const request = { query, ...(parsedLimit?.ok ? { limit: parsedLimit.value } : {}) };
    const found = (
      await bus.request(bus.subjects.catalogSearch, request, CatalogSearchResultSchema, { timeoutMs })
    ).tools;
    const named = new Map(catalog.map((tool) => [tool.flatName, tool.exposedName]));
    tools = found.map((tool) => {
      const exposedName = named.get(tool.flatName);
      return exposedName === undefined ? tool : { ...tool, exposedName };
    });
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
    ...renderTable(toolColumns(all), toolRows(tools, all), {
      maxWidth: tableWidth(ctx.terminal.stdout, ctx.terminal.env),
      paintHeader: ctx.paint.bold,
    }),
  );
  return ExitCode.ok;
}

/**
 * `[views.<name>]`: a view of the catalog served at `/mcp/<name>`, for the principals of its
 * groups. The listed set is the callable set: what a view does not list (tools, resources,
 * prompts, completions) it does not serve either. `/mcp` is the default view (everything).
 * Globs are matched by the gateway; here is only what the file may say.
 */
import { z } from "zod";

export interface ViewConfig {
  /** As configured: the path segment after `/mcp/`. */
  name: string;
  /** Globs over server names (`github`, `fs-*`); default every server. */
  servers: string[];
  /** Globs over the tools' names as their servers list them (`read_*`); default every tool. */
  tools: string[];
  /** The groups whose members may use the view; empty: every principal that may call tools. */
  groups: string[];
}

/** A path segment: letters, digits, `_` and `-`, as a server name. */
export const VIEW_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

const Glob = z.string().min(1, { error: "must not be empty (use * for every name)" });

const ViewTable = z.strictObject({
  servers: z
    .array(Glob)
    .min(1, { error: "must name at least one server glob" })
    .default(() => ["*"]),
  tools: z
    .array(Glob)
    .min(1, { error: "must name at least one tool glob" })
    .default(() => ["*"]),
  groups: z.array(z.string().min(1, { error: "must not be empty" })).default(() => []),
});

export const ViewsTable = z
  .record(z.string(), ViewTable)
  .check((ctx) => {
    for (const name of Object.keys(ctx.value)) {
      if (VIEW_NAME_PATTERN.test(name)) continue;
      ctx.issues.push({
        code: "custom",
        input: name,
        path: [name],
        message: "a view's name is its URL path segment: 1 to 64 letters, digits, _ or -",
      });
    }
  })
  .default(() => ({}))
  .transform(
    (views): Record<string, ViewConfig> =>
      Object.fromEntries(
        Object.entries(views).map(([name, view]) => [
          name,
          { name, servers: view.servers, tools: view.tools, groups: view.groups },
        ]),
      ),
  );

/**
 * Which listed tools a server's catalog entry keeps (docs/reference-behavior.md §2.6): well-formed
 * ones that `enabled_tools` allows and `disabled_tools` does not deny, by raw name. A malformed
 * tool is left out with the reason, so one bad definition does not take the server down; one
 * whose input schema no model could call with gets the reference's warning (§3.4).
 */
import { formatZodIssues, modelInputSchema, type Tool, ToolSchema } from "@toolbus/protocol";

export interface ToolFilter {
  /** Raw names; absent means every tool. Applied before `disabledTools`. */
  enabledTools?: readonly string[] | undefined;
  disabledTools?: readonly string[] | undefined;
}

export function isToolAllowed(filter: ToolFilter, rawName: string): boolean {
  const { enabledTools, disabledTools } = filter;
  return (enabledTools === undefined || enabledTools.includes(rawName)) && !disabledTools?.includes(rawName);
}

/**
 * The tools to keep, in listed order; why each malformed one was left out; and the reference's
 * warning for each allowed tool no model can be shown (its input schema is not an object, or
 * its root type is `"null"`): the first kind is left out, the second kept as listed, since the
 * catalog view itself leaves it out of what models see.
 */
export function acceptTools(
  listed: readonly unknown[],
  filter: ToolFilter,
): { accepted: Tool[]; rejected: string[]; unconvertible: string[] } {
  const accepted: Tool[] = [];
  const rejected: string[] = [];
  const unconvertible: string[] = [];
  for (const candidate of listed) {
    const parsed = ToolSchema.safeParse(candidate);
    const name = (candidate as { name?: unknown } | null)?.name;
    if (!parsed.success) {
      // A schema that is there but not an object is the reference's conversion failure; a
      // missing one, like any other defect, makes the tool malformed.
      const inputSchema = (candidate as { inputSchema?: unknown } | null)?.inputSchema;
      const schema = modelInputSchema(inputSchema);
      if (
        typeof name === "string" &&
        inputSchema !== undefined &&
        !schema.ok &&
        onlyInputSchemaIsBad(parsed.error.issues)
      ) {
        if (isToolAllowed(filter, name)) unconvertible.push(conversionWarning(name, schema.reason));
      } else rejected.push(`${describeTool(candidate)}: ${formatZodIssues(parsed.error)}`);
      continue;
    }
    if (!isToolAllowed(filter, parsed.data.name)) continue;
    accepted.push(parsed.data);
    const schema = modelInputSchema(parsed.data.inputSchema);
    if (!schema.ok) unconvertible.push(conversionWarning(parsed.data.name, schema.reason));
  }
  return { accepted, rejected, unconvertible };
}

/** The reference's text when a tool cannot become a model's function (docs/reference-behavior.md §3.4). */
export function conversionWarning(rawName: string, reason: string): string {
  return `Failed to convert \`${rawName}\` MCP tool to OpenAI tool: ${reason}`;
}

function onlyInputSchemaIsBad(issues: readonly { path: readonly PropertyKey[] }[]): boolean {
  return issues.every((issue) => issue.path[0] === "inputSchema");
}

function describeTool(candidate: unknown): string {
  const name = (candidate as { name?: unknown } | null)?.name;
  return typeof name === "string" ? `tool ${JSON.stringify(name.slice(0, 100))}` : "a tool without a name";
}

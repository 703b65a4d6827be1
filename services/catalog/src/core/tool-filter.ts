/**
 * Which listed tools a server's catalog entry keeps (codex-mcp-behavior.md §2.6): well-formed
 * ones that `enabled_tools` allows and `disabled_tools` does not deny, by raw name. A malformed
 * tool is left out with the reason, so one bad definition does not take the server down.
 */
import { formatZodIssues, type Tool, ToolSchema } from "@toolbus/protocol";

export interface ToolFilter {
  /** Raw names; absent means every tool. Applied before `disabledTools`. */
  enabledTools?: readonly string[] | undefined;
  disabledTools?: readonly string[] | undefined;
}

export function isToolAllowed(filter: ToolFilter, rawName: string): boolean {
  const { enabledTools, disabledTools } = filter;
  return (enabledTools === undefined || enabledTools.includes(rawName)) && !disabledTools?.includes(rawName);
}

/** The tools to keep, in listed order, and why each malformed one was left out. */
export function acceptTools(
  listed: readonly unknown[],
  filter: ToolFilter,
): { accepted: Tool[]; rejected: string[] } {
  const accepted: Tool[] = [];
  const rejected: string[] = [];
  for (const candidate of listed) {
    const parsed = ToolSchema.safeParse(candidate);
    if (!parsed.success) rejected.push(`${describeTool(candidate)}: ${formatZodIssues(parsed.error)}`);
    else if (isToolAllowed(filter, parsed.data.name)) accepted.push(parsed.data);
  }
  return { accepted, rejected };
}

function describeTool(candidate: unknown): string {
  const name = (candidate as { name?: unknown } | null)?.name;
  return typeof name === "string" ? `tool ${JSON.stringify(name.slice(0, 100))}` : "a tool without a name";
}

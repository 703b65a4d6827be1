/**
 * Server elicitations answered before anyone is asked (codex-mcp-behavior.md §5.7, step 2): a
 * `tool_suggestion` is always declined, whoever would otherwise answer.
 */

export const TOOL_SUGGESTION_KIND = "tool_suggestion";

/** Whether this `elicitation/create` request is declined for the server at once. */
export function declinedOutright(params: unknown): boolean {
  const meta = (params as { _meta?: unknown } | null)?._meta;
  return (
    typeof meta === "object" &&
    meta !== null &&
    (meta as Record<string, unknown>).codex_approval_kind === TOOL_SUGGESTION_KIND
  );
}

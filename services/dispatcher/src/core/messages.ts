/**
 * The exact texts a model or a UI reads when a call does not run or fails
 * (docs/reference-behavior.md §4, §5.4; docs/contract.md "Dispatch"). Character for character.
 */
import type { ApprovalDecision } from "@toolbus/protocol";

/**
 * The server events and metrics name when a call has no server of its own: a name the catalog
 * does not know, a resource tool asked about every server (the reference says `codex`, its name).
 */
export const HOST_SERVER_LABEL = "toolbus";

export function notAvailableMessage(server: string, tool: string): string {
  return `MCP tool \`${server}/${tool}\` is not available to the model`;
}

export function staleCatalogMessage(server: string, rawTool: string): string {
  return `tool call rejected because the catalog changed after \`${server}/${rawTool}\` was prepared`;
}

export const USER_REJECTED_MESSAGE = "user rejected MCP tool call";
export const USER_CANCELLED_MESSAGE = "user cancelled MCP tool call";

/**
 * A call its caller cancelled while its server ran it: the reference's cancel text, why, and that
 * the server was told (its connector sent `notifications/cancelled`). The reference has no text
 * for this case; it starts with the one it has for a cancelled call.
 */
export function cancelledWhileRunningMessage(server: string, tool: string, reason: string): string {
  return `${USER_CANCELLED_MESSAGE} while \`${server}/${tool}\` ran (${reason}); the server was sent notifications/cancelled`;
}
/**
 * What the model reads when an approval was not answered in time: the reference's reviewer
 * timeout text (§4 step 5), word for word, whoever was asked. The approvals service's own
 * message (how long it waited) stays in its records; the model is told what to do next.
 */
export const APPROVAL_TIMED_OUT_MESSAGE =
  "The automatic permission approval review did not finish before its deadline. " +
  "Do not assume the action is unsafe based on the timeout alone. " +
  "You may retry once, or ask the user for guidance or explicit approval.";

export type ApprovalOutcome =
  | { kind: "run" }
  | { kind: "skip"; reason: "denied" | "timed_out" | "cancelled"; message: string };

/** Whether the call runs, and if not, the text its failed item and the model get. */
export function approvalOutcome(reply: { decision: ApprovalDecision; message?: string }): ApprovalOutcome {
  switch (reply.decision) {
    case "approved":
    case "approved_for_session":
    case "approved_always":
      return { kind: "run" };
    case "denied":
      return { kind: "skip", reason: "denied", message: reply.message ?? USER_REJECTED_MESSAGE };
    case "timed_out":
      return { kind: "skip", reason: "timed_out", message: APPROVAL_TIMED_OUT_MESSAGE };
    case "abort":
      return { kind: "skip", reason: "cancelled", message: USER_CANCELLED_MESSAGE };
  }
}

const MAX_CAUSES = 16;

/**
 * `tool call error: <error + context chain>`. The chain follows `Error.cause` and is laid out
 * as the reference prints it: `msg\n\nCaused by:\n    cause`, numbered when there are several.
 */
export function toolCallErrorMessage(error: unknown): string {
  const [head, ...causes] = errorChain(error);
  let text = `tool call error: ${head}`;
  if (causes.length === 1) text += `\n\nCaused by:\n    ${causes[0]}`;
  else if (causes.length > 1) {
    text += `\n\nCaused by:${causes.map((cause, i) => `\n    ${i}: ${cause}`).join("")}`;
  }
  return text;
}

function errorChain(error: unknown): string[] {
  const chain: string[] = [];
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current !== undefined && !seen.has(current) && chain.length <= MAX_CAUSES) {
    seen.add(current);
    if (current instanceof Error) {
      chain.push(current.message);
      current = current.cause;
    } else {
      chain.push(String(current));
      current = undefined;
    }
  }
  return chain;
}

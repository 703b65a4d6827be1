/**
 * A human's answer to an approval request (docs/reference-behavior.md §5.4): which choices a request accepts, what
 * each choice decides, and what an unanswered request decides when it expires.
 */

import type { ApprovalChoice, ApprovalMode, ApprovalRequest, DecideResult, JsonValue } from "@toolbus/policy";
import { formatSeconds } from "./format-seconds.js";

export const USER_REJECTED_MESSAGE = "user rejected MCP tool call";
export const USER_CANCELLED_MESSAGE = "user cancelled MCP tool call";

/**
 * In modes `prompt` and `writes` nothing is remembered, so the remembering choices act as a
 * one-time Allow. `updatedArguments` (a hook's rewrite, shown to the human) rides along on approval.
 */
export function choiceToDecision(
  choice: ApprovalChoice,
  mode: ApprovalMode,
  updatedArguments?: JsonValue,
): DecideResult {
  const collapses = mode === "prompt" || mode === "writes";
  const approved = (decision: DecideResult["decision"]): DecideResult => ({
    decision,
    source: "human",
    ...(updatedArguments === undefined ? {} : { updatedArguments }),
  });
  switch (choice) {
    case "allow":
      return approved("approved");
    case "allow_session":
      return approved(collapses ? "approved" : "approved_for_session");
    case "allow_always":
      return approved(collapses ? "approved" : "approved_always");
    case "decline":
      return { decision: "denied", source: "human", message: USER_REJECTED_MESSAGE };
    case "cancel":
      return { decision: "abort", source: "human", message: USER_CANCELLED_MESSAGE };
  }
}

/**
 * What each choice `request` accepts would decide. Stored with the request when it is put to a
 * human, so that an answer is checked and recorded in one conditional write.
 */
export function decisionsByChoice(
  request: ApprovalRequest,
  mode: ApprovalMode,
  updatedArguments?: JsonValue,
): Partial<Record<ApprovalChoice, DecideResult>> {
  const decisions: Partial<Record<ApprovalChoice, DecideResult>> = {};
  for (const choice of acceptedChoices(request)) {
    decisions[choice] = choiceToDecision(choice, mode, updatedArguments);
  }
  return decisions;
}

/** The decision for a request nobody answered before `expiresAt`. */
export function timedOutDecision(timeoutMs: number): DecideResult {
  return {
    decision: "timed_out",
    source: "timeout",
    message: `MCP tool call approval timed out after ${formatSeconds(timeoutMs)} without an answer`,
  };
}

/** Where a pending request stands when someone tries to resolve it. */
export type PendingStatus = { state: "pending" } | { state: "resolved"; decision: DecideResult["decision"] };

export type ResolutionCheck = { ok: true } | { ok: false; message: string };

/**
 * Whether `choice` may resolve `request` now: once only, before it expires, and with one of the
 * offered options (or `decline`/`cancel`, which are always accepted).
 */
export function checkResolution(
  request: ApprovalRequest,
  status: PendingStatus,
  choice: ApprovalChoice,
  now: number,
): ResolutionCheck {
  if (status.state === "resolved") {
    return {
      ok: false,
      message: `approval request ${request.requestId} was already resolved (${status.decision}); each request takes one answer`,
    };
  }
  if (now >= Date.parse(request.expiresAt)) {
    return {
      ok: false,
      message: `approval request ${request.requestId} expired at ${request.expiresAt}; the call was not run, so retry the tool call to get a new request`,
    };
  }
  const accepted = acceptedChoices(request);
  if (!accepted.includes(choice)) {
    return {
      ok: false,
      message: `choice "${choice}" was not offered by approval request ${request.requestId}; choose one of ${accepted.join(", ")}`,
    };
  }
  return { ok: true };
}

export function acceptedChoices(request: ApprovalRequest): ApprovalChoice[] {
  const offered = request.options.map((option) => option.id);
  return offered.includes("decline") ? offered : [...offered, "decline"];
}

/**
 * `toolbus.approvals.cancel`: the dispatcher withdraws the request of a call whose caller went
 * away. The request is resolved as `abort`, so a decide still waiting on it (on any replica) ends
 * and the inboxes drop it. Nothing pending for the call is not an error: `{cancelled:false}`.
 */

import { approvalRequestId, type DecideResult } from "@toolbus/policy";
import type { ApprovalCancelRequest, ApprovalCancelResult } from "@toolbus/protocol";
import type { ApprovalPorts } from "../ports.js";

/** Who resolved the request, in the `resolved` event. */
export const RESOLVED_BY_CANCEL = "cancel";

export function withdrawnDecision(reason?: string): DecideResult {
  return {
    decision: "abort",
    source: "policy",
    message:
      reason === undefined || reason.trim() === ""
        ? "the approval request was withdrawn by its caller"
        : `the approval request was withdrawn by its caller: ${reason.trim()}`,
  };
}

export async function handleCancel(
  { callId, reason }: ApprovalCancelRequest,
  ports: Pick<ApprovalPorts, "pending" | "events">,
): Promise<ApprovalCancelResult> {
  const requestId = approvalRequestId(callId);
  const result = withdrawnDecision(reason);
  const settled = await ports.pending.settle(requestId, result, RESOLVED_BY_CANCEL);
  if (settled === undefined) return { cancelled: false };
  ports.events.resolved({ requestId, callId, decision: result.decision, by: RESOLVED_BY_CANCEL });
  return { cancelled: true };
}

/**
 * Who may answer the approval of a call: never the principal that asked for it, unless
 * `[approvals] self_approve` is on. The one rule the approvals service enforces on every answer
 * and the gateway follows when it decides to put a call's approval to its own caller.
 */

/** Whether `answerer` may not answer an approval of a call `requestedBy` asked for. */
export function isSelfApproval(
  requestedBy: string | undefined,
  answerer: string | undefined,
  selfApprove: boolean,
): boolean {
  return !selfApprove && requestedBy !== undefined && answerer === requestedBy;
}

/** The refusal of a self-approval: what happened, and what to do. */
export function selfApprovalRefusal(requestId: string, answerer: string): string {
  return `${answerer} asked for the call of approval request ${requestId}, so it may not answer it: another approver must (or set [approvals] self_approve = true to let callers approve their own calls)`;
}

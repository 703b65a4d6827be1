/**
 * Who a call is asked for, and who may answer its approval at the edge. A principal the edge
 * authenticated is the call's requester (`requestedBy`, whatever a REST body says); nobody
 * authenticated (auth off: one user on loopback) is nobody's. An approval is put to a caller as
 * an elicitation only when that caller may answer it: its own call's only with `[approvals]
 * self_approve` (whatever its role: the reference's one user answering its own prompts; the
 * rule of @toolbus/protocol, which the approvals service enforces on every answer), anyone
 * else's only when its role may approve (`Access.approve`).
 */
import { Access, ANONYMOUS, permits } from "@toolbus/http-guard";
import { type ApprovalRequest, isSelfApproval, type Principal } from "@toolbus/protocol";

/**
 * `{requestedBy, requesterName?}` for an authenticated caller (the name its identity provider
 * gives it, to show), nothing for an anonymous one. `caller` is the request's own principal; a
 * request another replica forwarded has only the session's name.
 */
export function requesterOf(client: { principal: string; caller?: Principal }): {
  requestedBy?: string;
  requesterName?: string;
} {
  const anonymous = client.caller
    ? client.caller.source === "anonymous"
    : client.principal === ANONYMOUS.name;
  if (anonymous) return {};
  const displayName = client.caller?.displayName;
  return {
    requestedBy: client.caller?.name ?? client.principal,
    ...(displayName !== undefined && displayName !== "" ? { requesterName: displayName.slice(0, 256) } : {}),
  };
}

/** Whether `caller` may be asked, and answer, `approval` (unknown: no). */
export function mayAnswerApproval(
  caller: Principal | undefined,
  approval: Pick<ApprovalRequest, "requestedBy">,
  selfApprove: boolean,
): boolean {
  if (caller === undefined) return false;
  const answerer = caller.source === "anonymous" ? undefined : caller.name;
  if (isSelfApproval(approval.requestedBy, answerer, false)) return selfApprove;
  return permits(caller.role, Access.approve);
}

/**
 * `toolbus.approvals.resolve`: a human's answer. The store records it in one conditional write
 * when the request is still pending, in time, and offered the choice (the decision each choice
 * gives was stored with the request); the waiting decide is woken by that same statement. Only
 * when that write changes nothing is the request read, to refuse the answer saying why (once
 * only, before expiry, an offered choice) — or to resolve a request stored before choices were
 * recorded with it. Of two answers racing on two replicas, one wins and the other is refused.
 * Then the grants the answer asks for are written and the `resolved` event goes out.
 */

import type { Logger } from "@toolbus/bus";
import { type GrantWrite, grantEffects } from "@toolbus/policy";
import type { ApprovalResolveRequest, ApprovalResolveResult } from "@toolbus/protocol";
import { isSelfApproval, selfApprovalRefusal, WireError } from "@toolbus/protocol";
import { checkResolution, choiceToDecision } from "../core/index.js";
import type { ApprovalPorts, GrantStore, PendingRecord } from "../ports.js";
import { expireRequest } from "./human-step.js";

/** Who answered, in the `resolved` event, when `resolve` did not say (a person on the bus). */
export const RESOLVED_BY_USER = "user";

type ResolvePorts = Pick<ApprovalPorts, "pending" | "events" | "sessionGrants" | "persistentGrants" | "now">;

export async function handleResolve(
  { requestId, choice, by: resolver, grantScope }: ApprovalResolveRequest,
  ports: ResolvePorts,
  ctx: { logger: Logger; selfApprove: boolean },
): Promise<ApprovalResolveResult> {
  // An answer in the name of a principal is checked against who asked for the call first.
  if (resolver !== undefined && !ctx.selfApprove) {
    const record = await ports.pending.find(requestId);
    if (record !== undefined && isSelfApproval(record.request.requestedBy, resolver, false)) {
      throw new WireError("bad_request", selfApprovalRefusal(requestId, resolver));
    }
  }
  const now = ports.now();
  // Who answered: the principal the edge authenticated, else a person on the bus (the CLI).
  const by = resolver ?? RESOLVED_BY_USER;
  const settled =
    (await ports.pending.answer(requestId, choice, by, now)) ??
    (await resolveAfterReading(requestId, choice, by, now, ports));
  const result = settled.result;
  if (result === undefined) throw new Error(`approval request ${requestId} was resolved without a decision`);
  const effects = grantEffects(result, settled.keys, settled.fingerprint, grantScope);
  const grantedAt = new Date(now).toISOString();
  // The decision stands even if remembering it fails: the call runs, and the next one asks again.
  const remember = async (store: GrantStore, write: GrantWrite | undefined, which: string) => {
    if (write === undefined) return;
    try {
      await store.put(write.key, { ...write.grant, grantedAt, requestId });
    } catch (err) {
      ctx.logger.error({ err, key: write.key }, `could not remember the ${which} grant of ${requestId}`);
    }
  };
  await Promise.all([
    remember(ports.sessionGrants, effects.session, "session"),
    remember(ports.persistentGrants, effects.persistent, "persistent"),
  ]);
  ports.events.resolved({
    requestId,
    callId: settled.request.callId,
    decision: result.decision,
    by,
  });
  return { decision: result.decision };
}

/** The answer the one-write path did not take: refused with the reason, or resolved the long way. */
async function resolveAfterReading(
  requestId: string,
  choice: ApprovalResolveRequest["choice"],
  by: string,
  now: number,
  ports: ResolvePorts,
): Promise<PendingRecord> {
  const record = await ports.pending.find(requestId);
  if (record === undefined) {
    throw new WireError(
      "bad_request",
      `no approval request ${requestId} exists; list the pending requests (toolbus.approvals.list) for their ids`,
    );
  }
  // Expired but not yet marked: mark it now, so its waiters and the inboxes hear of it.
  if (record.state === "pending" && now >= Date.parse(record.request.expiresAt)) {
    await expireRequest(record, ports);
  }
  refuseUnless(record, choice, now);
  const result = { ...choiceToDecision(choice, record.mode, record.updatedArguments), decidedBy: by };
  const settled = await ports.pending.settle(requestId, result, by);
  if (settled === undefined) {
    // Someone else resolved it between our read and our write: say so, with their decision.
    const winner = await ports.pending.find(requestId);
    if (winner !== undefined) refuseUnless(winner, choice, now);
    throw new Error(`approval request ${requestId} could not be resolved and is not resolved either`);
  }
  return settled;
}

function refuseUnless(record: PendingRecord, choice: ApprovalResolveRequest["choice"], now: number): void {
  // A request that timed out was not answered: report it as expired, not as answered.
  const answered =
    record.state === "resolved" && record.result !== undefined && record.result.decision !== "timed_out";
  const status =
    answered && record.result !== undefined
      ? ({ state: "resolved", decision: record.result.decision } as const)
      : ({ state: "pending" } as const);
  const check = checkResolution(record.request, status, choice, now);
  if (!check.ok) throw new WireError("bad_request", check.message);
}

/**
 * The periodic sweep: requests nobody waits on any more (their dispatcher went away) still time
 * out, so the inboxes drop them and a late answer is refused as expired. Replicas may sweep at
 * once; the store resolves each request once.
 */
import type { ApprovalPorts } from "../ports.js";
import { expireRequest } from "./human-step.js";

const SWEEP_BATCH = 100;

/** Answers how many requests this sweep timed out. */
export async function expireOverdue(
  ports: Pick<ApprovalPorts, "pending" | "events" | "now">,
): Promise<number> {
  let expired = 0;
  for (const requestId of await ports.pending.overdue(ports.now(), SWEEP_BATCH)) {
    const record = await ports.pending.find(requestId);
    if (record !== undefined && (await expireRequest(record, ports))) expired += 1;
  }
  return expired;
}

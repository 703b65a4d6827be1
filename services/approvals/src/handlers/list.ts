/** `toolbus.approvals.list`: the requests still waiting for a human, oldest first. */
import type { ApprovalsListResult } from "@toolbus/protocol";
import type { ApprovalPorts } from "../ports.js";

export async function handleList(
  ports: Pick<ApprovalPorts, "pending" | "now">,
): Promise<ApprovalsListResult> {
  return { pending: await ports.pending.listPending(ports.now()) };
}

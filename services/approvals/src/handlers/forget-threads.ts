/**
 * `toolbus.approvals.forget_threads`: the MCP session these threads belonged to ended, so their
 * "Allow for this session" grants end with it (the gateway asks when a client ends its session
 * or lets it expire). A thread without grants is no error: it counts 0.
 */

import { sessionKeyPrefix } from "@toolbus/policy";
import type { ForgetThreadsRequest, ForgetThreadsResult } from "@toolbus/protocol";
import type { ApprovalPorts } from "../ports.js";

export async function handleForgetThreads(
  { threadIds }: ForgetThreadsRequest,
  ports: Pick<ApprovalPorts, "sessionGrants">,
): Promise<ForgetThreadsResult> {
  const counts = await Promise.all(
    [...new Set(threadIds)].map((threadId) => ports.sessionGrants.forgetPrefix(sessionKeyPrefix(threadId))),
  );
  return { forgotten: counts.reduce((sum, count) => sum + count, 0) };
}

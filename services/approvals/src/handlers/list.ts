/** `toolbus.approvals.list`: one page of the requests still waiting for a human, oldest first. */
import {
  type ApprovalsListRequest,
  type ApprovalsListResult,
  DEFAULT_APPROVALS_PAGE,
  WireError,
} from "@toolbus/protocol";
import { decodeListCursor, encodeListCursor, type ListPosition } from "../core/index.js";
import type { ApprovalPorts } from "../ports.js";

export async function handleList(
  request: ApprovalsListRequest,
  ports: Pick<ApprovalPorts, "pending" | "now">,
): Promise<ApprovalsListResult> {
  const limit = request.limit ?? DEFAULT_APPROVALS_PAGE;
  let after: ListPosition | undefined;
  if (request.cursor !== undefined) {
    after = decodeListCursor(request.cursor);
    if (after === undefined) {
      throw new WireError(
        "bad_request",
        "cursor: not a cursor of approvals.list; pass the nextCursor of the previous page, or none for the first page",
      );
    }
  }
  // One more than the page: whether it exists says whether there is a next page.
  const rows = await ports.pending.listPending(ports.now(), {
    limit: limit + 1,
    ...(after ? { after } : {}),
    ...(request.callId === undefined ? {} : { callId: request.callId }),
  });
  const pending = rows.slice(0, limit);
  const last = pending.at(-1);
  return rows.length > limit && last !== undefined
    ? { pending, nextCursor: encodeListCursor({ createdAt: last.createdAt, requestId: last.requestId }) }
    : { pending };
}

/**
 * `ApprovalsHttpDeps` over the bus: list and resolve are requests to the approvals service (any
 * replica), live events come from the bus. The approvals service serves its own routes this way,
 * and so can the gateway.
 */
import type { Bus, Logger } from "@toolbus/bus";
import { ApprovalResolveResultSchema, ApprovalsListResultSchema, type Subjects } from "@toolbus/protocol";
import { subscribeInboxEvents } from "../nats/approval-events.js";
import type { ApprovalsHttpDeps } from "./approvals-http.js";

export function approvalsHttpOverBus(
  bus: Pick<Bus, "request" | "nc">,
  subjects: Subjects,
  logger: Logger,
): ApprovalsHttpDeps {
  return {
    list: (request) => bus.request(subjects.approvalsList, request, ApprovalsListResultSchema),
    resolve: (request) => bus.request(subjects.approvalsResolve, request, ApprovalResolveResultSchema),
    subscribe: (listener) => subscribeInboxEvents(bus, subjects, listener, logger),
  };
}

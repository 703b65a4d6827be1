/**
 * The human-side events on the bus (docs/contract.md "Approvals"): `<prefix>.approvals.pending` and
 * `<prefix>.approvals.resolved`, core NATS publishes (kind `event` in the protocol's subject
 * table), and a subscription to both for live views such as the inbox's SSE stream.
 */
import type { Bus, Logger } from "@toolbus/bus";
import {
  type ApprovalRequest,
  ApprovalRequestSchema,
  type ApprovalResolvedEvent,
  ApprovalResolvedEventSchema,
  type Subjects,
} from "@toolbus/protocol";
import type { ApprovalEventSink } from "../../ports.js";

export type InboxEvent =
  | { type: "pending"; request: ApprovalRequest }
  | { type: "resolved"; resolved: ApprovalResolvedEvent };

export function natsApprovalEvents(bus: Pick<Bus, "publish">, subjects: Subjects): ApprovalEventSink {
  return {
    pending: (request) => bus.publish(subjects.approvalsPending, request),
    resolved: (event) => bus.publish(subjects.approvalsResolved, event),
  };
}

/** Calls `listener` for every pending and resolved event on the bus; returns the unsubscribe. */
export function subscribeInboxEvents(
  bus: Pick<Bus, "nc">,
  subjects: Subjects,
  listener: (event: InboxEvent) => void,
  logger: Logger,
): () => void {
  const pending = bus.nc.subscribe(subjects.approvalsPending, {
    callback: (err, msg) => {
      if (err) return;
      const parsed = ApprovalRequestSchema.safeParse(safeJson(msg.string()));
      if (parsed.success) listener({ type: "pending", request: parsed.data });
      else logger.warn({ subject: msg.subject }, "ignored a pending event that does not match the contract");
    },
  });
  const resolved = bus.nc.subscribe(subjects.approvalsResolved, {
    callback: (err, msg) => {
      if (err) return;
      const parsed = ApprovalResolvedEventSchema.safeParse(safeJson(msg.string()));
      if (parsed.success) listener({ type: "resolved", resolved: parsed.data });
      else logger.warn({ subject: msg.subject }, "ignored a resolved event that does not match the contract");
    },
  });
  return () => {
    pending.unsubscribe();
    resolved.unsubscribe();
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

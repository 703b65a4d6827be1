/**
 * Whose events a principal sees on `/v1/events`: a call's begin and end carry its arguments and
 * result, so a principal that may not answer approvals (a `caller`) sees only its own calls
 * (`requestedBy`) and the approvals pending for them; approvers and admins (and everyone when
 * auth is off) see every call. Server status, start-up and catalog events are everyone's.
 */
import { Access, permits } from "@toolbus/http-guard";
import type { Principal } from "@toolbus/protocol";

export type EventKind =
  | "call.begin"
  | "call.end"
  | "server.status"
  | "startup_complete"
  | "catalog"
  | "approvals.pending"
  | "approvals.resolved";

export function eventVisibleTo(kind: EventKind, data: object, viewer: Principal): boolean {
  if (permits(viewer.role, Access.approve)) return true;
  const requestedBy = "requestedBy" in data ? data.requestedBy : undefined;
  switch (kind) {
    case "call.begin":
    case "call.end":
    case "approvals.pending":
      return requestedBy !== undefined && requestedBy === viewer.name;
    case "approvals.resolved":
      // It names no requester; the caller learns the outcome from its call's end.
      return false;
    case "server.status":
    case "startup_complete":
    case "catalog":
      return true;
  }
}

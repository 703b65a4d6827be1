/**
 * The approvals metrics. Decisions are counted where they are made: by this service for the
 * calls it is asked about, and by the dispatcher for the calls its copy of the policy settles
 * without asking (both record `decisions` from @toolbus/policy's declaration).
 */
import { AttributeCache, defineMetrics } from "@toolbus/bus";
import { APPROVAL_DECISIONS_METRIC, APPROVALS_METER, decisionAttributes } from "@toolbus/policy";
import type { PendingRecord, PendingStore } from "./ports.js";

export const APPROVALS_METRICS = defineMetrics(APPROVALS_METER, {
  decisions: APPROVAL_DECISIONS_METRIC,
  pending: {
    kind: "gauge",
    name: "toolbus.approvals.pending",
    unit: "{request}",
    description:
      "Approval requests waiting for a human answer (read from Postgres, so the same on every replica).",
    attributes: [],
  },
  waitDuration: {
    kind: "histogram",
    name: "toolbus.approvals.wait.duration",
    unit: "s",
    description:
      "Seconds an approval request waited for a human, from being put to them to being resolved, by decision and how it was resolved (`user`, `timeout`, `cancel`).",
    attributes: ["toolbus.approval.decision", "toolbus.approval.resolved_by"],
    boundaries: [1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600],
  },
});

/** Counts decisions with one attribute object per (decision, source). */
export function decisionCounter(counter = APPROVALS_METRICS.instrument("decisions")) {
  const attributes = new AttributeCache(decisionAttributes);
  return (result: { decision: string; source: string }): void => {
    counter.add(1, attributes.get(result.decision, result.source));
  };
}

/**
 * The store, recording in `histogram` how long each request it resolves waited (from its
 * `createdAt` to `now()`), whoever resolves it: a human's answer, the timeout, a cancel.
 */
export function recordingWaits(
  store: PendingStore,
  now: () => number,
  histogram = APPROVALS_METRICS.instrument("waitDuration"),
): PendingStore {
  const attributes = new AttributeCache((decision: string, resolvedBy: string) => ({
    "toolbus.approval.decision": decision,
    "toolbus.approval.resolved_by": resolvedBy,
  }));
  const record = (settled: PendingRecord | undefined, by: string) => {
    if (settled?.result === undefined) return settled;
    const waitedMs = now() - Date.parse(settled.request.createdAt);
    // A person is `user` whoever they are: principal names would make the attribute unbounded.
    const how = by === "timeout" || by === "cancel" ? by : "user";
    histogram.record(Math.max(0, waitedMs) / 1000, attributes.get(settled.result.decision, how));
    return settled;
  };
  return {
    find: (requestId) => store.find(requestId),
    create: (record) => store.create(record),
    listPending: (at, page) => store.listPending(at, page),
    overdue: (at, limit) => store.overdue(at, limit),
    settle: async (requestId, result, by) => record(await store.settle(requestId, result, by), by),
    answer: async (requestId, choice, by, at) => record(await store.answer(requestId, choice, by, at), by),
  };
}

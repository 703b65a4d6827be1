/**
 * The approval decisions counter, as data. Decisions are counted where they are made: by the
 * approvals service for the calls it is asked about, and by the dispatcher for the calls its copy
 * of the policy settles (and its fail-closed denials). Both record this one instrument.
 */

/** The meter both record it under. */
export const APPROVALS_METER = "@toolbus/approvals";

export const APPROVAL_DECISIONS_METRIC = {
  kind: "counter",
  name: "toolbus.approvals.decisions",
  unit: "{decision}",
  description:
    "Approval decisions made, by decision (`approved`, `approved_for_session`, `approved_always`, `denied`, `abort`, `timed_out`) and source (`mode`, `annotations`, `session`, `persistent`, `hook`, `human`, `timeout`, `policy`); includes those the dispatcher settles from the policy alone, and its fail-closed denials when this service does not answer.",
  attributes: ["toolbus.approval.decision", "toolbus.approval.source"],
} as const;

/** The counter's attributes for one decision. */
export function decisionAttributes(decision: string, source: string) {
  return { "toolbus.approval.decision": decision, "toolbus.approval.source": source };
}

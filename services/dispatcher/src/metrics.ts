/** The dispatcher's metrics, recorded by the `toolbus.dispatch.call` endpoint (dispatcher-service.ts). */
import { AttributeCache, defineMetrics, type Instruments } from "@toolbus/bus";
import { APPROVAL_DECISIONS_METRIC, APPROVALS_METER, decisionAttributes } from "@toolbus/policy";

export const DISPATCHER_METRICS = defineMetrics("@toolbus/dispatcher", {
  calls: {
    kind: "counter",
    name: "toolbus.dispatcher.calls",
    unit: "{call}",
    description:
      "Tool calls the dispatcher answered, by server (`toolbus` for a name the catalog does not know, or a resource tool asked about every server) and status (`completed`, `failed`, `skipped`, `invalid_arguments`); a repeated callId answered from memory is not counted again.",
    attributes: ["mcp.server", "toolbus.call.status"],
  },
  callDuration: {
    kind: "histogram",
    name: "toolbus.dispatcher.call.duration",
    unit: "s",
    description:
      "Seconds from receiving a tool call to answering it (resolution, approval — a human's wait included — and the server's own time), by server and status.",
    attributes: ["mcp.server", "toolbus.call.status"],
  },
  staleRejections: {
    kind: "counter",
    name: "toolbus.dispatcher.stale_rejections",
    unit: "{call}",
    description:
      "Calls refused because the tool changed since the caller was shown it, by server and where it was noticed (`dispatcher`: fingerprint or revision check; `connector`: the connector's revision barrier).",
    attributes: ["mcp.server", "toolbus.rejected_by"],
  },
});

export type DispatcherInstruments = Instruments<(typeof DISPATCHER_METRICS)["specs"]>;

/** Where a stale call was refused. */
export type StaleRejectedBy = "dispatcher" | "connector";

/** Records calls with attribute objects built once per (server, status). */
export function dispatcherRecorder(instruments: DispatcherInstruments = DISPATCHER_METRICS.create()) {
  const byStatus = new AttributeCache((server: string, status: string) => ({
    "mcp.server": server,
    "toolbus.call.status": status,
  }));
  const byRejecter = new AttributeCache((server: string, rejectedBy: string) => ({
    "mcp.server": server,
    "toolbus.rejected_by": rejectedBy,
  }));
  return {
    call(server: string, status: string, seconds: number): void {
      const attributes = byStatus.get(server, status);
      instruments.calls.add(1, attributes);
      instruments.callDuration.record(seconds, attributes);
    },
    staleRejected(server: string, rejectedBy: StaleRejectedBy): void {
      instruments.staleRejections.add(1, byRejecter.get(server, rejectedBy));
    },
  };
}

export type DispatcherRecorder = ReturnType<typeof dispatcherRecorder>;

/**
 * The approvals service's decisions counter (declared in @toolbus/policy, documented with the
 * approvals metrics): the dispatcher adds the calls its copy of the policy settles, and its
 * fail-closed denials.
 */
const APPROVAL_DECISIONS = defineMetrics(APPROVALS_METER, { decisions: APPROVAL_DECISIONS_METRIC });

/** Counts decisions with one attribute object per (decision, source). */
export function decisionCounter(counter = APPROVAL_DECISIONS.instrument("decisions")) {
  const attributes = new AttributeCache(decisionAttributes);
  return (result: { decision: string; source: string }): void => {
    counter.add(1, attributes.get(result.decision, result.source));
  };
}

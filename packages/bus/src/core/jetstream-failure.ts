/**
 * What a failed JetStream request says about what to do next. Pure: reads the error's name,
 * status and message (and those of its causes), never the network.
 *
 * - `unanswered`: nobody answered (no responders, a timeout). It may pass (a leader being
 *   elected, a node lost); retry it. Only this kind counts toward renewing the connection.
 * - `unavailable`: JetStream answered that it cannot take the request now (status 503). Retry it;
 *   the connection is fine.
 * - `recurring`: the same request will fail the same way however often it is sent: over
 *   max_payload, refused by the identity's permissions, refused by JetStream for what it is (a
 *   bad request, a full stream). Never retried, never a reason to renew.
 */

export type JetStreamFailure = "unanswered" | "unavailable" | "recurring";

const UNANSWERED_NAMES = new Set([
  "NoResponders",
  "NoRespondersError",
  "TimeoutError",
  "JetStreamNotEnabled",
]);

export function jetStreamFailureOf(error: unknown): JetStreamFailure {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (UNANSWERED_NAMES.has(e.name)) return "unanswered";
    if (/no responders|timed? ?out\b/i.test(e.message) && !/max_payload/.test(e.message)) {
      return "unanswered";
    }
    // JetStreamApiError carries it as `status`, JetStreamStatusError (a direct get's) as `code`.
    const { status, code } = e as { status?: unknown; code?: unknown };
    if (status === 503 || (e.name === "JetStreamStatusError" && code === 503)) return "unavailable";
  }
  return "recurring";
}

/** Whether the request is worth sending again. */
export function isTransient(failure: JetStreamFailure): boolean {
  return failure !== "recurring";
}

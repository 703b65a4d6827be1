/**
 * The human step of `decide`: put the request to a human once (the table's unique request id
 * makes a second replica, or a retry, re-attach instead of asking again), then wait for the
 * answer wherever it is given — on any replica, or before a restart — and turn an unanswered
 * request into `timed_out` when its time runs out.
 */
import type { Logger } from "@toolbus/bus";
import { WireError } from "@toolbus/protocol";
import { type DecideResult, timedOutDecision } from "../core/index.js";
import type { ApprovalPorts, NewPendingRecord, PendingRecord } from "../ports.js";

export async function askHuman(
  record: NewPendingRecord,
  ports: ApprovalPorts,
  ctx: { logger: Logger; signal: AbortSignal },
): Promise<DecideResult> {
  const { created, record: stored } = await ports.pending.create(record);
  const { requestId, expiresAt } = stored.request;
  if (created) {
    ports.events.pending(stored.request);
    ctx.logger.info({ requestId, expiresAt }, `waiting for a human to answer ${requestId}`);
  } else {
    ctx.logger.info({ requestId }, `${requestId} was already put to a human; waiting for that answer`);
  }
  return awaitDecision(requestId, ports, ctx.signal);
}

/** Answers the request's decision once it has one; re-reads it on every wake-up and poll. */
export async function awaitDecision(
  requestId: string,
  ports: ApprovalPorts,
  signal: AbortSignal,
): Promise<DecideResult> {
  for (;;) {
    if (signal.aborted) throw replicaStopping(requestId);
    // Listen before reading, so an answer given in between still wakes this loop.
    const wake = ports.signals.next(requestId);
    const stop = new AbortController();
    try {
      const record = await ports.pending.find(requestId);
      if (record === undefined) throw new Error(`approval request ${requestId} is missing from the store`);
      if (record.state === "resolved" && record.result !== undefined) return record.result;
      const remaining = Date.parse(record.request.expiresAt) - ports.now();
      if (remaining <= 0) {
        await expireRequest(record, ports);
        continue;
      }
      await Promise.race([
        wake.promise,
        delay(Math.min(remaining, ports.pollIntervalMs), AbortSignal.any([signal, stop.signal])),
      ]);
    } finally {
      wake.cancel();
      stop.abort();
    }
  }
}

/** Resolves an unanswered request as `timed_out`; false when someone answered it first. */
export async function expireRequest(
  record: PendingRecord,
  ports: Pick<ApprovalPorts, "pending" | "events">,
): Promise<boolean> {
  const { requestId, callId, createdAt, expiresAt } = record.request;
  const result = timedOutDecision(Date.parse(expiresAt) - Date.parse(createdAt));
  const settled = await ports.pending.settle(requestId, result, "timeout");
  if (settled === undefined) return false;
  ports.events.resolved({ requestId, callId, decision: result.decision, by: "timeout" });
  return true;
}

function replicaStopping(requestId: string): WireError {
  return new WireError(
    "server_unavailable",
    `this approvals replica is stopping while ${requestId} waits for a human; send decide again with the same callId to keep waiting for the same request`,
    { retryable: true },
  );
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

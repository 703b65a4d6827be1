/**
 * The human step of `decide`: put the request to a human once (the table's unique request id
 * makes a second replica, or a retry, re-attach instead of asking again — only for the same call:
 * a request bound to another call's digest is refused), then wait for the answer wherever it is
 * given — on any replica, or before a restart — and turn an unanswered request into `timed_out`
 * when its time runs out.
 */
import { type Logger, NoAnswerYet } from "@toolbus/bus";
import { bindingMismatch, type DecideResult } from "@toolbus/policy";
import { WireError } from "@toolbus/protocol";
import { timedOutDecision } from "../core/index.js";
import type { ApprovalPorts, DecisionWake, NewPendingRecord, PendingRecord } from "../ports.js";

/** The log line of a decide that found its call already put to a human. */
export const REATTACHED = "decide re-attached to the call's approval request";

/** A stored request read after its wake-up was registered: nothing answered since is missed. */
export interface WatchedRequest {
  record: PendingRecord;
  wake: DecisionWake;
}

export async function askHuman(
  record: NewPendingRecord,
  ports: ApprovalPorts,
  ctx: { logger: Logger; signal: AbortSignal },
): Promise<DecideResult> {
  const { requestId } = record.request;
  const wake = ports.signals.next(requestId);
  let outcome: Awaited<ReturnType<ApprovalPorts["pending"]["create"]>>;
  try {
    outcome = await ports.pending.create(record);
  } catch (error) {
    wake.cancel();
    throw error;
  }
  const { created, record: stored } = outcome;
  if (!created) refuseAnotherCall({ record: stored, wake }, record.request.callId, record.callDigest);
  if (created) {
    ports.events.pending(stored.request);
    ctx.logger.info(
      { requestId, expiresAt: stored.request.expiresAt },
      `waiting for a human to answer ${requestId}`,
    );
  } else {
    ctx.logger.info({ requestId, state: stored.state }, REATTACHED);
  }
  return awaitDecision(requestId, ports, ctx.signal, { record: stored, wake });
}

/**
 * Throws `bad_request` (and stops listening) when the stored request was put for another call
 * than the one digesting to `digest`: a reused callId never re-attaches to another call's request.
 */
export function refuseAnotherCall(watched: WatchedRequest, callId: string, digest: string): void {
  const mismatch = bindingMismatch(callId, watched.record.callDigest, digest);
  if (mismatch === undefined) return;
  watched.wake.cancel();
  throw new WireError("bad_request", mismatch);
}

/**
 * Looks for the request a call was put to, listening first so that an answer given after the
 * read still wakes the wait on it. Undefined (and nothing left listening) when there is none.
 */
export async function watchRequest(
  requestId: string,
  ports: Pick<ApprovalPorts, "pending" | "signals">,
): Promise<WatchedRequest | undefined> {
  const wake = ports.signals.next(requestId);
  try {
    const record = await ports.pending.find(requestId);
    if (record !== undefined) return { record, wake };
  } catch (error) {
    wake.cancel();
    throw error;
  }
  wake.cancel();
  return undefined;
}

/**
 * Answers the request's decision once it has one: from the wake-up that carries it, else by
 * reading the request again (after a wake-up without it, and every `pollIntervalMs`).
 * `watched`: the request as already read, with its wake-up, so the first read is skipped.
 */
export async function awaitDecision(
  requestId: string,
  ports: ApprovalPorts,
  signal: AbortSignal,
  watched?: WatchedRequest,
): Promise<DecideResult> {
  let known = watched;
  for (;;) {
    // Listen before reading, so an answer given in between still wakes this loop.
    const wake = known?.wake ?? ports.signals.next(requestId);
    const stop = new AbortController();
    try {
      if (signal.aborted) throw waitEnded(requestId, signal);
      let record: PendingRecord | undefined;
      try {
        record = known?.record ?? (await ports.pending.find(requestId));
      } catch {
        // The store is out of reach (Postgres restarting): no news yet. Wait and read again; the
        // caller's waitMs (or this replica stopping) still ends the wait, so nothing hangs.
        known = undefined;
        await delay(ports.pollIntervalMs, AbortSignal.any([signal, stop.signal]));
        continue;
      }
      known = undefined;
      if (record === undefined) throw new Error(`approval request ${requestId} is missing from the store`);
      if (record.state === "resolved" && record.result !== undefined) return record.result;
      const remaining = Date.parse(record.request.expiresAt) - ports.now();
      if (remaining <= 0) {
        await expireRequest(record, ports);
        continue;
      }
      const woken = await Promise.race([
        wake.promise,
        delay(Math.min(remaining, ports.pollIntervalMs), AbortSignal.any([signal, stop.signal])),
      ]);
      if (woken !== undefined) return woken;
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

/** Why a wait ended without a decision: the caller's `waitMs` ran out, or this replica stops. */
function waitEnded(requestId: string, signal: AbortSignal): WireError {
  const reason: unknown = signal.reason;
  if (reason instanceof DOMException && reason.name === "TimeoutError") {
    return new NoAnswerYet(
      `${requestId} is still waiting for a human; send decide again with the same callId to keep waiting for the same request`,
    );
  }
  return replicaStopping(requestId);
}

function replicaStopping(requestId: string): WireError {
  return new WireError(
    "server_unavailable",
    `this approvals replica is stopping while ${requestId} waits for a human; send decide again with the same callId to keep waiting for the same request`,
    { retryable: true },
  );
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function delay(ms: number, signal: AbortSignal): Promise<undefined> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(undefined);
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve(undefined);
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

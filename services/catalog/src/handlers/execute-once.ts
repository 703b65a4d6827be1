/**
 * A tool call runs once on its server across every catalog replica serving it: the callId is
 * claimed in the executions ledger before the server sees anything. A second request for the
 * callId (the dispatcher asking again after an answer was lost, or after its own replacement
 * took the call over) gets the first outcome, or waits for it while the replica running it lives.
 * If that replica died mid-call, nobody knows whether the tool ran: the call is answered with an
 * error saying so, for good, and never run again. A result too large for one message is recorded
 * as the stored reply that carried it, so a repeat is answered with that same stored reply.
 */
import {
  type Answered,
  type CallLedgerPort,
  type Claim,
  type HandlerContext,
  StoredReplyAnswer,
} from "@toolbus/bus";
import {
  type ConnectorCallRequest,
  type ConnectorCallResult,
  callIdReusedMessage,
  canonicalDigest,
  type ErrorCode,
  WireError,
} from "@toolbus/protocol";

/** What the ledger keeps of a call: its result, or the wire error it was answered with. */
export type ExecutionOutcome =
  | { result: ConnectorCallResult["result"] }
  | { error: { code: ErrorCode; message: string } };

/** The executions ledger, as the connector needs it. */
export type ExecutionLedgerPort = CallLedgerPort<ExecutionOutcome>;

/** Outcomes after which the server certainly did not see the call: a retry may run it. */
const NOT_RUN: ReadonlySet<ErrorCode> = new Set([
  "stale_revision",
  "server_not_ready",
  "bad_request",
  "tool_hidden",
]);

/** The outcome recorded for a call whose replica died while it ran. */
export function orphanedOutcome(owner: string): ExecutionOutcome {
  return {
    error: {
      code: "transport_error",
      message:
        `the toolbus connector running this call (${owner}) stopped before it answered: the tool may or may not ` +
        "have run, and toolbus does not run it again; check the server's state before calling it with a new callId",
    },
  };
}

export function executeOnce(deps: {
  ledger: ExecutionLedgerPort;
  /** How long a request waits for the replica already running its call. */
  waitMs: (request: ConnectorCallRequest) => number;
  run(request: ConnectorCallRequest, ctx: HandlerContext): Promise<ConnectorCallResult>;
}) {
  return async (
    request: ConnectorCallRequest,
    ctx: HandlerContext,
  ): Promise<ConnectorCallResult | StoredReplyAnswer> => {
    const { ledger } = deps;
    const identity = canonicalDigest({ tool: request.tool, arguments: request.arguments ?? null });
    let claim: Claim<ExecutionOutcome>;
    try {
      claim = await ledger.claim(request.callId, identity);
    } catch (error) {
      throw new WireError(
        "server_unavailable",
        "the executions ledger (JetStream) did not answer, so the tool was not called; send the call again",
        { retryable: true, cause: error },
      );
    }
    switch (claim.kind) {
      case "claimed":
        return runAndRecord();
      case "reused":
        throw new WireError("bad_request", callIdReusedMessage(request.callId));
      case "done":
      case "stored":
      case "too_large":
        return answer(claim);
      case "running": {
        const waited = await ledger.await(request.callId, identity, deps.waitMs(request), ctx.signal);
        switch (waited.kind) {
          case "done":
          case "stored":
          case "too_large":
            return answer(waited);
          case "orphaned":
            return answer({ kind: "done", outcome: waited.outcome });
          case "reused":
            throw new WireError("bad_request", callIdReusedMessage(request.callId));
          case "taken_over":
            return runAndRecord();
          case "timeout":
            throw new WireError("timeout", `call ${request.callId} is still running on another replica`, {
              retryable: true,
            });
        }
      }
    }

    async function runAndRecord(): Promise<ConnectorCallResult | StoredReplyAnswer> {
      let outcome: ExecutionOutcome;
      try {
        outcome = { result: (await deps.run(request, ctx)).result };
      } catch (error) {
        if (!(error instanceof WireError)) {
          void ledger.release(request.callId).catch(() => undefined);
          throw error;
        }
        outcome = { error: { code: error.code, message: error.message } };
        if (NOT_RUN.has(error.code)) {
          // The server never saw it: forget the claim, so the call may run once things change.
          void ledger.release(request.callId).catch(() => undefined);
          throw error;
        }
      }
      // Recorded once the reply is sent: a result too large for one record is kept as the stored reply.
      void ctx.sent
        .then(({ stored }) => ledger.finish(request.callId, identity, outcome, stored))
        .catch((error: unknown) => {
          ctx.logger.warn(
            { err: error },
            "the call's outcome was not recorded; a repeat waits for this replica",
          );
        });
      return answer({ kind: "done", outcome });
    }
  };
}

function answer(recorded: Answered<ExecutionOutcome>): ConnectorCallResult | StoredReplyAnswer {
  if (recorded.kind === "stored") return new StoredReplyAnswer(recorded.reply);
  if (recorded.kind === "too_large") throw new WireError("payload_too_large", recorded.message);
  const { outcome } = recorded;
  if ("error" in outcome) throw new WireError(outcome.error.code, outcome.error.message);
  return { result: outcome.result };
}

/**
 * A tool call runs once on its server across every catalog replica serving it (`runOnce` of
 * @toolbus/bus on the executions ledger): the callId is claimed before the server sees anything. A second request for the
 * callId (the dispatcher asking again after an answer was lost, or after its own replacement
 * took the call over) gets the first outcome, or waits for it while the replica running it lives.
 * If that replica died mid-call, nobody knows whether the tool ran: the call is answered with an
 * error saying so, for good, and never run again. A result too large for one message is recorded
 * as the stored reply that carried it, so a repeat is answered with that same stored reply.
 */
import { type CallLedgerPort, type HandlerContext, runOnce, type StoredReplyAnswer } from "@toolbus/bus";
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
}): (request: ConnectorCallRequest, ctx: HandlerContext) => Promise<ConnectorCallResult | StoredReplyAnswer> {
  const once = runOnce<ConnectorCallRequest, ExecutionOutcome, ConnectorCallResult>({
    ledger: deps.ledger,
    ledgerName: "executions ledger",
    notRun: "the tool was not called",
    waitMs: deps.waitMs,
    reused: (request) => {
      throw new WireError("bad_request", callIdReusedMessage(request.callId));
    },
    async run(request, ctx) {
      try {
        return { result: (await deps.run(request, ctx)).result };
      } catch (error) {
        // The server never saw it (or it is not a wire error): not recorded, so the call may
        // run once things change. Any other error may have followed a run: it is the outcome.
        if (!(error instanceof WireError) || NOT_RUN.has(error.code)) throw error;
        return { error: { code: error.code, message: error.message } };
      }
    },
    reply(outcome) {
      if ("error" in outcome) throw new WireError(outcome.error.code, outcome.error.message);
      return { result: outcome.result };
    },
  });
  return (request, ctx) =>
    once(request, canonicalDigest({ tool: request.tool, arguments: request.arguments ?? null }), ctx);
}

/**
 * The one run-once algorithm of both ledgers (the dispatchers' calls, the connectors'
 * executions): a request's callId is claimed in the ledger before anything runs. A second
 * request with the callId — a retry, a request re-sent after its process died, a held call sent
 * again — gets the first one's outcome, or waits for it while the instance running it lives,
 * and takes the call over when the ledger says so (its owner died and running it again is
 * safe). The same callId for another call is refused. An outcome too large for one record is
 * recorded as the stored reply that carried it, and a repeat is answered with that stored reply.
 */
import { WireError } from "@toolbus/protocol";
import type { Answered, CallLedgerPort, Claim } from "./call-ledger.js";
import { type HandlerContext, StoredReplyAnswer } from "./serve.js";

export interface RunOnceOptions<Req, Outcome, Reply> {
  ledger: CallLedgerPort<Outcome>;
  /** What the ledger holds, for messages: "call ledger", "executions ledger". */
  ledgerName: string;
  /** What did not happen when the ledger cannot be asked: "the call did not run". */
  notRun: string;
  /** How long a request waits for the instance already running its call. */
  waitMs(request: Req): number;
  /** The answer to a callId already used for another call (a reply, or a throw). */
  reused(request: Req): Reply;
  /**
   * Runs the call. A throw is not recorded: the claim is dropped, so a repeat runs it again
   * (return the error as an outcome to keep it).
   */
  run(request: Req, ctx: HandlerContext): Promise<Outcome>;
  /** The reply an outcome is answered with (or a throw). */
  reply(outcome: Outcome): Reply;
}

export function runOnce<Req extends { callId: string }, Outcome, Reply>(
  options: RunOnceOptions<Req, Outcome, Reply>,
) {
  const { ledger } = options;
  const answer = (recorded: Answered<Outcome>): Reply | StoredReplyAnswer => {
    if (recorded.kind === "stored") return new StoredReplyAnswer(recorded.reply);
    if (recorded.kind === "too_large") throw new WireError("payload_too_large", recorded.message);
    return options.reply(recorded.outcome);
  };

  return async (request: Req, identity: string, ctx: HandlerContext): Promise<Reply | StoredReplyAnswer> => {
    const { callId } = request;
    const runAndRecord = async (): Promise<Reply | StoredReplyAnswer> => {
      let outcome: Outcome;
      try {
        outcome = await options.run(request, ctx);
      } catch (error) {
        // Nothing to remember: a repeat runs the call again.
        void ledger.release(callId).catch(() => undefined);
        throw error;
      }
      // Recorded once the reply is sent (a repeat that comes first waits for it): an outcome too
      // large for one record is kept as the stored reply that carried it.
      void ctx.sent
        .then(({ stored }) => ledger.finish(callId, identity, outcome, stored))
        .catch((error: unknown) => {
          ctx.logger.warn(
            { err: error, callId },
            `the outcome was not recorded in the ${options.ledgerName}; a repeat on another replica waits for this one`,
          );
        });
      return answer({ kind: "done", outcome });
    };

    let claim: Claim<Outcome>;
    try {
      claim = await ledger.claim(callId, identity);
    } catch (error) {
      // Without the ledger nothing can promise the call runs once: it does not run.
      throw new WireError(
        "server_unavailable",
        `the ${options.ledgerName} (JetStream) did not answer, so ${options.notRun}; send it again with the same callId`,
        { retryable: true, cause: error },
      );
    }
    switch (claim.kind) {
      case "claimed":
        return runAndRecord();
      case "reused":
        return options.reused(request);
      case "done":
      case "stored":
      case "too_large":
        return answer(claim);
      case "running": {
        ctx.logger.info({ owner: claim.owner }, "the call runs on another replica; waiting for it");
        const waited = await ledger.await(callId, identity, options.waitMs(request), ctx.signal);
        switch (waited.kind) {
          case "done":
          case "stored":
          case "too_large":
            return answer(waited);
          case "orphaned":
            return answer({ kind: "done", outcome: waited.outcome });
          case "reused":
            return options.reused(request);
          case "taken_over":
            ctx.logger.warn({ owner: claim.owner }, "the replica running this call stopped; running it here");
            return runAndRecord();
          case "timeout":
            throw new WireError(
              "timeout",
              `call ${callId} is still running on another replica; ask again with the same callId for its reply`,
              { retryable: true },
            );
        }
      }
    }
  };
}

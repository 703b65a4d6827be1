/**
 * A dispatch call runs once across every dispatcher replica: its callId is claimed in the
 * cluster's call ledger before anything runs. A second request with the callId — a client's
 * retry on another replica, the gateway sending again after a dispatcher died — gets the first
 * call's reply, waits for it while the replica running it lives, or takes the call over when
 * that replica died (safe: its approval re-attaches by callId and the connector runs a callId
 * once). The same callId for another call is refused. A reply too large for one message is
 * recorded as the stored reply that carried it, and a repeat is answered with that stored reply.
 */
import { type Answered, type Claim, type HandlerContext, type Logger, StoredReplyAnswer } from "@toolbus/bus";
import { type ToolCallReply, type ToolCallRequest, WireError } from "@toolbus/protocol";
import type { CallLedgerPort } from "../ports.js";

export function callOnce(deps: {
  ledger: CallLedgerPort;
  logger: Logger;
  /** How long a request waits for the replica already running its call. */
  waitMs: number;
  run(): Promise<ToolCallReply>;
  reused(): ToolCallReply;
}) {
  return async (
    request: ToolCallRequest,
    identity: string,
    ctx: HandlerContext,
  ): Promise<ToolCallReply | StoredReplyAnswer> => {
    const { ledger } = deps;
    let claim: Claim<ToolCallReply>;
    try {
      claim = await ledger.claim(request.callId, identity);
    } catch (error) {
      // Without the ledger nothing can promise the call runs once: it does not run.
      throw new WireError(
        "server_unavailable",
        "the call ledger (JetStream) did not answer, so the call did not run; send it again with the same callId",
        { retryable: true, cause: error },
      );
    }
    switch (claim.kind) {
      case "claimed":
        return runAndRecord();
      case "reused":
        return deps.reused();
      case "done":
      case "stored":
      case "too_large":
        return answer(claim);
      case "running": {
        ctx.logger.info({ owner: claim.owner }, "the call runs on another dispatcher; waiting for its reply");
        const waited = await ledger.await(request.callId, identity, deps.waitMs, ctx.signal);
        switch (waited.kind) {
          case "done":
          case "stored":
          case "too_large":
            return answer(waited);
          case "orphaned":
            return waited.outcome;
          case "reused":
            return deps.reused();
          case "taken_over":
            ctx.logger.warn(
              { owner: claim.owner },
              "the dispatcher running this call stopped; running it here",
            );
            return runAndRecord();
          case "timeout":
            throw new WireError(
              "timeout",
              `call ${request.callId} is still running on another dispatcher; ask again with the same callId for its reply`,
              { retryable: true },
            );
        }
      }
    }

    async function runAndRecord(): Promise<ToolCallReply> {
      let reply: ToolCallReply;
      try {
        reply = await deps.run();
      } catch (error) {
        // No reply to remember (e.g. approvals did not answer): a retry runs the call again, which
        // is safe, since its approval re-attaches by callId and the connector runs a callId once.
        void ledger.release(request.callId).catch(() => undefined);
        throw error;
      }
      // Recorded once the reply is sent (a retry that comes first waits for it): a reply too large
      // for one record is kept as the stored reply that carried it.
      void ctx.sent
        .then(({ stored }) => ledger.finish(request.callId, identity, reply, stored))
        .catch((error: unknown) => {
          deps.logger.warn(
            { err: error, callId: request.callId },
            "the call's reply was not recorded in the call ledger; a retry on another replica waits for this one",
          );
        });
      return reply;
    }
  };
}

function answer(recorded: Answered<ToolCallReply>): ToolCallReply | StoredReplyAnswer {
  if (recorded.kind === "stored") return new StoredReplyAnswer(recorded.reply);
  if (recorded.kind === "too_large") throw new WireError("payload_too_large", recorded.message);
  return recorded.outcome;
}

/**
 * A dispatch call runs once across every dispatcher replica (`runOnce` of @toolbus/bus on the
 * call ledger): a retry on another replica, the gateway sending again after a dispatcher died,
 * or a held call sent again gets the first call's reply, waits for it, or takes the call over
 * when the replica running it died (safe: its approval re-attaches by callId and the connector
 * runs a callId once). The same callId for another call gets `reused()`.
 */
import { type HandlerContext, runOnce, type StoredReplyAnswer } from "@toolbus/bus";
import type { ToolCallReply, ToolCallRequest } from "@toolbus/protocol";
import type { CallLedgerPort } from "../ports.js";

export function callOnce(deps: {
  ledger: CallLedgerPort;
  /** How long a request waits for the replica already running its call. */
  waitMs: number;
  run(): Promise<ToolCallReply>;
  reused(): ToolCallReply;
}): (
  request: ToolCallRequest,
  identity: string,
  ctx: HandlerContext,
) => Promise<ToolCallReply | StoredReplyAnswer> {
  return runOnce<ToolCallRequest, ToolCallReply, ToolCallReply>({
    ledger: deps.ledger,
    ledgerName: "call ledger",
    notRun: "the call did not run",
    waitMs: () => deps.waitMs,
    reused: () => deps.reused(),
    // A throw (e.g. approvals did not answer) is not remembered: a retry runs the call again,
    // which is safe, since its approval re-attaches by callId and the connector runs a callId once.
    run: () => deps.run(),
    reply: (outcome) => outcome,
  });
}

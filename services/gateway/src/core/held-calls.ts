/**
 * A question handed back to a 2026-07-28 client (MRTR): the call's approval, which that client
 * may answer, put in an `input_required` result instead of a request in the middle of the call.
 * The client holds only an unguessable key (its `requestState`); the call, who may answer and
 * the approval stay in the gateway's store (adapters/nats/session-store.ts), so nothing the
 * client echoes can be forged, and a key is taken once, so no answer can be replayed. Only the
 * principal the call runs for, at the same endpoint (view), may take it.
 */
import { type ApprovalRequest, ApprovalRequestSchema, ToolCallRequestSchema } from "@toolbus/protocol";
import { z } from "zod";
import { approvalElicitation } from "./approval-elicitation.js";

export const HeldQuestionSchema = z.object({
  principal: z.string(),
  view: z.string().optional(),
  call: z.object({
    request: ToolCallRequestSchema,
    server: z.string(),
    tool: z.string(),
    exposedName: z.string(),
    traceContext: z.record(z.string(), z.string()),
  }),
  approval: ApprovalRequestSchema,
});
export type HeldQuestion = z.infer<typeof HeldQuestionSchema>;

/** The approval's key in `inputRequests`, and so in the client's `inputResponses`. */
export const APPROVAL_INPUT = "approval";

/** Whether `asker` may answer the question: the call's own principal, at the same endpoint. */
export function mayTakeQuestion(
  question: Pick<HeldQuestion, "principal" | "view">,
  asker: { principal: string; view: string | undefined },
): boolean {
  return question.principal === asker.principal && question.view === asker.view;
}

/** The `input_required` result that puts the approval to the client. */
export function approvalInputRequired(
  approval: ApprovalRequest,
  requestState: string,
): {
  resultType: "input_required";
  inputRequests: Record<string, { method: string; params: Record<string, unknown> }>;
  requestState: string;
} {
  return {
    resultType: "input_required",
    inputRequests: {
      [APPROVAL_INPUT]: { method: "elicitation/create", params: approvalElicitation(approval) },
    },
    requestState,
  };
}

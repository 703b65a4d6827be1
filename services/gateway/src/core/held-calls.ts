/**
 * A question handed back to a 2026-07-28 client (MRTR): the call's approval, which that client
 * may answer, or a server's elicitation during the call, put in an `input_required` result
 * instead of a request in the middle of the call. The client holds only an unguessable key (its
 * `requestState`); the call, who may answer and the question stay in the gateway's store
 * (adapters/nats/session-store.ts), so nothing the client echoes can be forged, and a key is
 * taken once, so no answer can be replayed. Only the principal the call runs for, at the same
 * endpoint (view), may take it.
 */
import {
  type ApprovalRequest,
  ApprovalRequestSchema,
  type CallElicitationRequest,
  type CallElicitationResult,
  CallElicitationResultSchema,
  ElicitationParamsSchema,
  IdSchema,
  ToolCallRequestSchema,
} from "@toolbus/protocol";
import { z } from "zod";
import { approvalElicitation, type ElicitAnswer } from "./approval-elicitation.js";

/** A question a 2026-07-28 client answers by sending its call again. */
export type ClientQuestion =
  | { kind: "approval"; approval: ApprovalRequest }
  | { kind: "elicitation"; relayed: CallElicitationRequest & { relayId: string } }
  /** No question: the call runs past the point where a client that takes tasks gets one. */
  | { kind: "running" };

const QuestionSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("approval"), approval: ApprovalRequestSchema }),
  z.object({ kind: z.literal("elicitation"), relayId: IdSchema, request: ElicitationParamsSchema }),
]);

/** A call kept for its client while it waits (`HeldCall` of ports.ts). */
export const HeldCallSchema = z.object({
  request: ToolCallRequestSchema,
  server: z.string(),
  tool: z.string(),
  exposedName: z.string(),
  traceContext: z.record(z.string(), z.string()),
});

export const HeldQuestionSchema = z.object({
  principal: z.string(),
  view: z.string().optional(),
  call: HeldCallSchema,
  question: QuestionSchema,
});

/** A server's elicitation, as a held question or a task keeps it. */
export const ElicitationQuestionSchema = QuestionSchema.options[1];
export type HeldQuestion = z.infer<typeof HeldQuestionSchema>;

/** The question as it is kept: an elicitation by the relay id its server's connector asks under. */
export function storedQuestion(
  question: Exclude<ClientQuestion, { kind: "running" }>,
): HeldQuestion["question"] {
  return question.kind === "approval"
    ? question
    : { kind: "elicitation", relayId: question.relayed.relayId, request: question.relayed.request };
}

/** The question's key in `inputRequests`, and so in the client's `inputResponses`. */
export function inputKey(question: { kind: "approval" | "elicitation" }): string {
  return question.kind;
}

/**
 * Whether a held question or a task belongs to `asker`: the call's own principal, at the same
 * endpoint (view). To anyone else it does not exist.
 */
export function belongsTo(
  question: Pick<HeldQuestion, "principal" | "view">,
  asker: { principal: string; view: string | undefined },
): boolean {
  return question.principal === asker.principal && question.view === asker.view;
}

/** The `input_required` result that puts the question to the client. */
export function inputRequired(
  question: HeldQuestion["question"],
  requestState: string,
): {
  resultType: "input_required";
  inputRequests: Record<string, { method: string; params: Record<string, unknown> }>;
  requestState: string;
} {
  const params = question.kind === "approval" ? approvalElicitation(question.approval) : question.request;
  return {
    resultType: "input_required",
    inputRequests: { [inputKey(question)]: { method: "elicitation/create", params } },
    requestState,
  };
}

/** The client's answer to an elicitation, as it sent it in `inputResponses`; undefined when it is not one. */
export function elicitationAnswer(value: unknown): (ElicitAnswer & CallElicitationResult) | undefined {
  const parsed = CallElicitationResultSchema.safeParse(value);
  return parsed.success ? (parsed.data as ElicitAnswer & CallElicitationResult) : undefined;
}

/**
 * A question handed back to a 2026-07-28 client (MRTR): the call's approval, which that client
 * may answer, or its server's questions during the call, put in an `input_required` result
 * instead of requests in the middle of the call. A server's questions are a round: a 2026-07-28
 * server's `inputRequests` under the keys it chose, passed through as they are; a 2025 server's
 * elicitation or sampling request is a round of one (`elicitation`, `sampling`). The client holds only an unguessable key (its
 * `requestState`; the server's own `requestState` never leaves toolbus); the call, who may
 * answer and the question stay in the gateway's store (adapters/nats/session-store.ts), so
 * nothing the client echoes can be forged, and a key is taken once, so no answer can be
 * replayed. Only the principal the call runs for, at the same endpoint (view), may take it.
 */
import {
  type ApprovalRequest,
  ApprovalRequestSchema,
  type CallElicitationResult,
  CallElicitationResultSchema,
  type CallInputRequest,
  CallSamplingResultSchema,
  IdSchema,
  type InputRequest,
  InputRequestsSchema,
  JsonValueSchema,
  PromptArgumentValuesSchema,
  ToolCallRequestSchema,
} from "@toolbus/protocol";
import { z } from "zod";
import { approvalElicitation, type ElicitAnswer } from "./approval-elicitation.js";

/** A server's round of questions, as its connector relayed it (named, so it can be resumed). */
export type RelayedRound = CallInputRequest & { relayId: string };

/** A question a 2026-07-28 client answers by sending its call again. */
export type ClientQuestion =
  | { kind: "approval"; approval: ApprovalRequest }
  | { kind: "input"; relayed: RelayedRound }
  /** No question: the call runs past the point where a client that takes tasks gets one. */
  | { kind: "running" };

/** The approval's key in `inputRequests`, and so in the client's `inputResponses`. */
export const APPROVAL_KEY = "approval";
/** The keys a 2025 server's elicitation and sampling request are asked under (a round of one). */
export const ELICITATION_KEY = "elicitation";
export const SAMPLING_KEY = "sampling";

const QuestionSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("approval"), approval: ApprovalRequestSchema }),
  z.object({ kind: z.literal("input"), relayId: IdSchema, requests: InputRequestsSchema }),
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

/**
 * A prompt whose 2026-07-28 server asked first, kept for its client: the prompt to ask for again
 * (the same, whatever the client sends then), the questions, and the server's own `requestState`.
 */
export const HeldPromptSchema = z.object({
  principal: z.string(),
  view: z.string().optional(),
  name: z.string(),
  arguments: PromptArgumentValuesSchema.optional(),
  requests: InputRequestsSchema,
  serverState: z.string().optional(),
});
export type HeldPrompt = z.infer<typeof HeldPromptSchema>;

/** A server's round, as a held question or a task keeps it. */
export const InputQuestionSchema = QuestionSchema.options[1];
export type InputQuestion = z.infer<typeof InputQuestionSchema>;
export type HeldQuestion = z.infer<typeof HeldQuestionSchema>;

/** The question as it is kept: a round by the relay id its server's connector asks under. */
export function storedQuestion(
  question: Exclude<ClientQuestion, { kind: "running" }>,
): HeldQuestion["question"] {
  return question.kind === "approval" ? question : inputQuestion(question.relayed);
}

export function inputQuestion(relayed: RelayedRound): InputQuestion {
  return { kind: "input", relayId: relayed.relayId, requests: relayed.requests };
}

/** A 2025 server's elicitation or sampling request, as a round of one under its key. */
export function singleRound(
  relayed: { callId: string; server: string; relayId: string },
  method: "elicitation/create" | "sampling/createMessage",
  params: Record<string, unknown>,
): RelayedRound {
  const key = method === "elicitation/create" ? ELICITATION_KEY : SAMPLING_KEY;
  return {
    callId: relayed.callId,
    server: relayed.server,
    relayId: relayed.relayId,
    requests: { [key]: { method, params } },
  };
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

/** The questions an `input_required` result (or a task) puts to the client, by key. */
export function inputRequests(question: HeldQuestion["question"]): Record<string, InputRequest> {
  return question.kind === "approval"
    ? { [APPROVAL_KEY]: { method: "elicitation/create", params: approvalElicitation(question.approval) } }
    : question.requests;
}

/** The `input_required` result that puts the question to the client. */
export function inputRequired(
  question: HeldQuestion["question"],
  requestState: string,
): { resultType: "input_required"; inputRequests: Record<string, InputRequest>; requestState: string } {
  return { resultType: "input_required", inputRequests: inputRequests(question), requestState };
}

/** The client's answer to an elicitation, as it sent it in `inputResponses`; undefined when it is not one. */
export function elicitationAnswer(value: unknown): (ElicitAnswer & CallElicitationResult) | undefined {
  const parsed = CallElicitationResultSchema.safeParse(value);
  return parsed.success ? (parsed.data as ElicitAnswer & CallElicitationResult) : undefined;
}

/** What answers each kind of question, and how a person reads its shape. */
const ANSWER_SHAPES: Readonly<Record<string, { schema: z.ZodType; shape: string }>> = {
  "elicitation/create": {
    schema: CallElicitationResultSchema,
    shape: '{"action":"accept"|"decline"|"cancel",…}',
  },
  "sampling/createMessage": { schema: CallSamplingResultSchema, shape: '{"role","content","model",…}' },
  "roots/list": { schema: z.looseObject({ roots: z.array(JsonValueSchema) }), shape: '{"roots":[…]}' },
};

/**
 * The client's answers to a round (`inputResponses`): one for each key the round asked, in the
 * shape its question is answered with (keys it did not ask are ignored); else what is wrong.
 */
export function roundAnswers(
  requests: Readonly<Record<string, InputRequest>>,
  responses: Readonly<Record<string, unknown>> | undefined,
): { ok: true; responses: Record<string, unknown> } | { ok: false; message: string } {
  const answers: Record<string, unknown> = {};
  for (const [key, request] of Object.entries(requests)) {
    const answer = responses?.[key];
    const expected = ANSWER_SHAPES[request.method];
    if (answer === undefined || (expected !== undefined && !expected.schema.safeParse(answer).success)) {
      return {
        ok: false,
        message: `Invalid params: inputResponses.${key} must answer inputRequests.${key} (${request.method}${expected ? `: ${expected.shape}` : ""}); send every answer of the round with the requestState it came with`,
      };
    }
    answers[key] = answer;
  }
  return { ok: true, responses: answers };
}

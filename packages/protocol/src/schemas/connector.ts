/**
 * Internal subjects between the dispatcher and a server's connector: the raw call on
 * `<prefix>.connector.<server>.call`, and what the connector relays back while the call runs
 * on `<prefix>.calls.<callId>.<kind>` (progress, log messages, and elicitations, sampling
 * requests and a 2026-07-28 server's rounds of questions to answer).
 */
import { z } from "zod";
import { HoldMsSchema } from "./dispatch.js";
import { CallToolResultSchema, InputRequestsSchema, InputResponsesSchema } from "./mcp.js";
import {
  cappedString,
  IdSchema,
  JsonObjectSchema,
  JsonValueSchema,
  RequesterSchema,
  RevisionSchema,
  ServerNameSchema,
} from "./primitives.js";

/**
 * The raw call. The connector rejects it with `stale_revision` when its server's revision is
 * no longer `preparedRevision` (the barrier), and never calls the server then.
 */
export const ConnectorCallRequestSchema = z.object({
  callId: IdSchema,
  threadId: IdSchema.optional(),
  /** The raw tool name, as the server listed it. */
  tool: z.string().min(1),
  /** Sent as `tools/call` arguments; absent means none. */
  arguments: JsonObjectSchema.optional(),
  /** The server revision the dispatcher prepared the call against. */
  preparedRevision: RevisionSchema,
  /** Caps the server's `tool_timeout_sec`; the smaller of the two applies. */
  timeoutMs: z.int().positive().optional(),
  /** Extra request `_meta`; the connector sets `callId` and `threadId` over it. */
  meta: JsonObjectSchema.optional(),
  /** Who asked (`ToolCallRequest.requestedBy`): a server isolated per principal runs it in theirs. */
  requestedBy: RequesterSchema.optional(),
  /** What the caller's MCP client can answer (`ToolCallRequest.clientCapabilities`). */
  clientCapabilities: JsonObjectSchema.optional(),
});
export type ConnectorCallRequest = z.infer<typeof ConnectorCallRequestSchema>;

export const ConnectorCallResultSchema = z.object({ result: CallToolResultSchema });
export type ConnectorCallResult = z.infer<typeof ConnectorCallResultSchema>;

/** Longest reason a cancellation carries (a client's longer reason is cut to fit). */
export const MAX_CANCEL_REASON_BYTES = 1024;

/**
 * A call's cancellation: on `<prefix>.calls.<callId>.cancel` (the edge tells the dispatcher that
 * its client cancelled the call or went away) and on `<prefix>.connector.<server>.cancel` (the
 * dispatcher tells the connector running it, which sends the server `notifications/cancelled`
 * with this reason). A cancel for a call not running (yet) is remembered for a while.
 */
export const CallCancelSchema = z.object({
  callId: IdSchema,
  /** Why, as a person reads it: who cancelled and how. */
  reason: cappedString(MAX_CANCEL_REASON_BYTES),
});
export type CallCancel = z.infer<typeof CallCancelSchema>;

export const CallRelayKind = {
  progress: "progress",
  logging: "logging",
  elicitation: "elicitation",
  sampling: "sampling",
  input: "input",
} as const;
export type CallRelayKind = (typeof CallRelayKind)[keyof typeof CallRelayKind];

/** `<prefix>.calls.<callId>.progress` (event): the server's `notifications/progress`. */
export const CallProgressSchema = z.object({
  callId: IdSchema,
  server: ServerNameSchema,
  progress: z.number(),
  total: z.number().optional(),
  message: z.string().optional(),
});
export type CallProgress = z.infer<typeof CallProgressSchema>;

export const LoggingLevel = {
  debug: "debug",
  info: "info",
  notice: "notice",
  warning: "warning",
  error: "error",
  critical: "critical",
  alert: "alert",
  emergency: "emergency",
} as const;
export type LoggingLevel = (typeof LoggingLevel)[keyof typeof LoggingLevel];

/** `<prefix>.calls.<callId>.logging` (event): a `notifications/message` sent during the call. */
export const CallLoggingSchema = z.object({
  callId: IdSchema,
  server: ServerNameSchema,
  level: z.enum(LoggingLevel),
  logger: z.string().optional(),
  data: JsonValueSchema,
});
export type CallLogging = z.infer<typeof CallLoggingSchema>;

/** The raw `elicitation/create` params (form or URL mode), passed through untouched. */
export const ElicitationParamsSchema = z.looseObject({
  mode: z.string().optional(),
  message: z.string(),
  requestedSchema: JsonObjectSchema.optional(),
  url: z.string().optional(),
  _meta: JsonObjectSchema.optional(),
});
export type ElicitationParams = z.infer<typeof ElicitationParamsSchema>;

/**
 * A server's question during a call waits for a person or a model, for as long as the tool's
 * timeout allows: it is held (`holdMs`, as dispatch calls are). The connector names the question
 * with `relayId`; the gateway answers within `holdMs`, with the answer or a retryable `timeout`
 * ("no answer yet"), and the same request sent again waits on for the same answer. No reply then
 * depends on NATS keeping a reply subject open for minutes.
 */
const HeldRelayFields = {
  relayId: IdSchema.optional(),
  holdMs: HoldMsSchema.optional(),
};

/** `<prefix>.calls.<callId>.elicitation` (req/reply): the server asks the caller something. */
export const CallElicitationRequestSchema = z.object({
  callId: IdSchema,
  server: ServerNameSchema,
  request: ElicitationParamsSchema,
  ...HeldRelayFields,
});
export type CallElicitationRequest = z.infer<typeof CallElicitationRequestSchema>;

export const ElicitationAction = { accept: "accept", decline: "decline", cancel: "cancel" } as const;
export type ElicitationAction = (typeof ElicitationAction)[keyof typeof ElicitationAction];

/** The raw `ElicitResult` handed back to the server. */
export const CallElicitationResultSchema = z.looseObject({
  action: z.enum(ElicitationAction),
  content: JsonObjectSchema.optional(),
  _meta: JsonObjectSchema.optional(),
});
export type CallElicitationResult = z.infer<typeof CallElicitationResultSchema>;

/** The raw `sampling/createMessage` params, passed through untouched. */
export const SamplingParamsSchema = z.looseObject({
  messages: z.array(z.looseObject({ role: z.string(), content: JsonValueSchema })),
  maxTokens: z.number(),
  systemPrompt: z.string().optional(),
  _meta: JsonObjectSchema.optional(),
});
export type SamplingParams = z.infer<typeof SamplingParamsSchema>;

/**
 * `<prefix>.calls.<callId>.sampling` (req/reply): the server asks the caller's model for a
 * message. A caller that cannot sample answers with an error, which the server gets as one.
 */
export const CallSamplingRequestSchema = z.object({
  callId: IdSchema,
  server: ServerNameSchema,
  request: SamplingParamsSchema,
  ...HeldRelayFields,
});
export type CallSamplingRequest = z.infer<typeof CallSamplingRequestSchema>;

/** The raw `CreateMessageResult` handed back to the server. */
export const CallSamplingResultSchema = z.looseObject({
  role: z.string(),
  content: JsonValueSchema,
  model: z.string(),
  stopReason: z.string().optional(),
  _meta: JsonObjectSchema.optional(),
});
export type CallSamplingResult = z.infer<typeof CallSamplingResultSchema>;

/**
 * `<prefix>.calls.<callId>.<server>.input` (req/reply, held): a 2026-07-28 server's round of
 * questions during a call (its `inputRequests`, under the keys it chose), answered all at once:
 * a 2026-07-28 caller gets the round as it is, a 2025 one each question as a request.
 */
export const CallInputRequestSchema = z.object({
  callId: IdSchema,
  server: ServerNameSchema,
  requests: InputRequestsSchema,
  ...HeldRelayFields,
});
export type CallInputRequest = z.infer<typeof CallInputRequestSchema>;

/** The caller's answers (`inputResponses`), by the server's keys, handed back to the server raw. */
export const CallInputResultSchema = z.object({ responses: InputResponsesSchema });
export type CallInputResult = z.infer<typeof CallInputResultSchema>;

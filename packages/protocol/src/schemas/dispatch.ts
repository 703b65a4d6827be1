/**
 * `toolbus.dispatch.call` (docs/contract.md "Dispatch"): the call request as a model runtime
 * sends it, and the reply with the model projection and the untruncated raw result.
 */
import { z } from "zod";
import { CallToolResultSchema } from "./mcp.js";
import {
  cappedString,
  DurationMsSchema,
  FingerprintSchema,
  IdSchema,
  JsonObjectSchema,
  MAX_ARGUMENTS_BYTES,
  NameSchema,
  RequesterNameSchema,
  RequesterSchema,
  RevisionSchema,
  ServerNameSchema,
} from "./primitives.js";

export const TruncationMode = { bytes: "bytes", tokens: "tokens" } as const;
export type TruncationMode = (typeof TruncationMode)[keyof typeof TruncationMode];

export const TruncationPolicySchema = z.object({
  mode: z.enum(TruncationMode),
  limit: z.int().positive(),
});
export type TruncationPolicy = z.infer<typeof TruncationPolicySchema>;

/** The model policy when a request gives none; the dispatcher applies it. */
export const DEFAULT_MODEL_TRUNCATION: Readonly<TruncationPolicy> = Object.freeze({
  mode: "bytes",
  limit: 10_000,
});

/** What the calling model can take; absent media flags mean the model takes that medium. */
export const ModelCapabilitiesSchema = z.object({
  images: z.boolean().optional(),
  audio: z.boolean().optional(),
  /** The model takes `detail: "original"` images; else that detail is dropped (default false). */
  imageDetailOriginal: z.boolean().optional(),
  truncation: TruncationPolicySchema.optional(),
});
export type ModelCapabilities = z.infer<typeof ModelCapabilitiesSchema>;

/** A model-visible name: the flat name, or the (namespace, name) pair the model saw. */
export const CallableRefSchema = z.union(
  [NameSchema, z.object({ namespace: NameSchema, name: NameSchema })],
  {
    error: "Invalid input: expected a flat tool name or {namespace, name}",
  },
);
export type CallableRef = z.infer<typeof CallableRefSchema>;

/** The longest `holdMs` a dispatch call may ask for: well inside NATS's 2-minute reply window. */
export const MAX_HOLD_MS = 60_000;
/** The `holdMs` toolbus's own callers (the gateway, the CLI) send. */
export const CALL_HOLD_MS = 20_000;
/**
 * A held request's `holdMs` (docs/contract.md "Held calls"): the responder answers within it,
 * with the answer or a retryable `timeout` meaning "no answer yet", and the request sent again
 * waits on for the same answer.
 */
export const HoldMsSchema = z.number().int().min(1).max(MAX_HOLD_MS);

export const ToolCallRequestSchema = z.object({
  callId: IdSchema,
  threadId: IdSchema.optional(),
  turnId: IdSchema.optional(),
  tool: CallableRefSchema,
  /** The raw JSON text the model produced; empty (after trim) means no arguments. */
  arguments: cappedString(MAX_ARGUMENTS_BYTES),
  /** The catalog revision the model was shown; a newer server revision makes the call stale. */
  catalogRevision: RevisionSchema.optional(),
  /** The fingerprint of the tool the model was shown; a different one makes the call stale. */
  toolFingerprint: FingerprintSchema.optional(),
  strictAutoReview: z.boolean().optional(),
  model: ModelCapabilitiesSchema.optional(),
  /**
   * Answer within this many milliseconds: a call with no reply by then is answered `timeout`
   * (retryable) and goes on, and the same request sent again (same callId) waits on for the same
   * call. A caller waits for a human as long as it likes, while no single reply takes longer than
   * NATS keeps a reply subject open for its responder (2 minutes by default).
   */
  holdMs: HoldMsSchema.optional(),
  /** Who asked for the call at the edge (`RequesterSchema`); the gateway sets it. */
  requestedBy: RequesterSchema.optional(),
  /** The name `requestedBy` is shown by, when the edge knows one; ignored without `requestedBy`. */
  requesterName: RequesterNameSchema.optional(),
  /**
   * What the caller's MCP client declared it can answer (its capabilities): a 2026-07-28 server
   * is told these with the call, so it asks only what the caller can answer. Absent: toolbus's own.
   */
  clientCapabilities: JsonObjectSchema.optional(),
});
export type ToolCallRequest = z.infer<typeof ToolCallRequestSchema>;

export const ImageDetail = { auto: "auto", low: "low", high: "high", original: "original" } as const;
export type ImageDetail = (typeof ImageDetail)[keyof typeof ImageDetail];

/** One item of the model projection (docs/reference-behavior.md §7). */
export const ContentItemSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("input_text"), text: z.string() }),
  z.object({ type: z.literal("input_image"), imageUrl: z.string(), detail: z.enum(ImageDetail).optional() }),
  z.object({ type: z.literal("input_audio"), data: z.string(), format: z.string().optional() }),
  /**
   * A text block the server marked `_meta["codex/encryptedContent"]`: passed to the model as an
   * opaque item, so such results are not rejected.
   */
  z.object({ type: z.literal("encrypted_content"), encryptedContent: z.string() }),
]);
export type ContentItem = z.infer<typeof ContentItemSchema>;

/** What the model sees: `success` is false iff the raw result had `isError: true`. */
export const ModelOutputSchema = z.object({
  success: z.boolean(),
  body: z.union([z.string(), z.array(ContentItemSchema)], {
    error: "Invalid input: expected a string or an array of input_text, input_image and input_audio items",
  }),
});
export type ModelOutput = z.infer<typeof ModelOutputSchema>;

export const ToolCallStatus = {
  completed: "completed",
  failed: "failed",
  /** Rejected before the server saw it: stale, unknown, hidden, denied, cancelled. */
  skipped: "skipped",
  /** The argument text was not JSON; no events were published. */
  invalidArguments: "invalid_arguments",
} as const;
export type ToolCallStatus = (typeof ToolCallStatus)[keyof typeof ToolCallStatus];

export const ToolCallReplySchema = z.object({
  callId: IdSchema,
  status: z.enum(ToolCallStatus),
  server: ServerNameSchema.optional(),
  /** The raw tool name. */
  tool: z.string().optional(),
  hookName: z.string().optional(),
  output: ModelOutputSchema,
  result: CallToolResultSchema.optional(),
  error: z.string().optional(),
  /** Execution time after approval; 0 for skipped calls. */
  durationMs: DurationMsSchema,
  /** The whole handling time, approval wait included (the model header's wall time). */
  wallTimeMs: DurationMsSchema,
  catalogRevision: RevisionSchema,
});
export type ToolCallReply = z.infer<typeof ToolCallReplySchema>;

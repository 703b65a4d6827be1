/**
 * The life of one call as others see it (docs/contract.md "Lifecycle events", docs/reference-behavior.md §6):
 * begin and end events on the events stream, and the item a history or UI builds from them.
 */
import { z } from "zod";
import { CallToolResultSchema } from "./mcp.js";
import {
  DurationMsSchema,
  IdSchema,
  JsonValueSchema,
  RequesterNameSchema,
  RequesterSchema,
  ServerNameSchema,
  TimestampSchema,
} from "./primitives.js";

/** The raw route and the parsed arguments; `arguments` is `null` when there were none. */
export const McpInvocationSchema = z.object({
  server: ServerNameSchema,
  tool: z.string(),
  arguments: JsonValueSchema,
});
export type McpInvocation = z.infer<typeof McpInvocationSchema>;

const callIdentityShape = {
  callId: IdSchema,
  threadId: IdSchema.optional(),
  turnId: IdSchema.optional(),
  invocation: McpInvocationSchema,
  connectorId: z.string().optional(),
  mcpAppResourceUri: z.string().optional(),
  linkId: z.string().optional(),
  appName: z.string().optional(),
  actionName: z.string().optional(),
  pluginId: z.string().optional(),
  readOnlyHint: z.boolean().optional(),
  /** Who asked for the call at the edge (`ToolCallRequest.requestedBy`): whose event it is. */
  requestedBy: RequesterSchema.optional(),
  /** The name the requester is shown by, when the edge knew one. */
  requesterName: RequesterNameSchema.optional(),
  at: TimestampSchema,
};

/** `<prefix>.events.call.begin`: published before approval, so a waiting call is visible. */
export const CallBeginEventSchema = z.object(callIdentityShape);
export type CallBeginEvent = z.infer<typeof CallBeginEventSchema>;

export const CallEndStatus = { completed: "completed", failed: "failed" } as const;
export type CallEndStatus = (typeof CallEndStatus)[keyof typeof CallEndStatus];

/** `{ok: result}` when the server answered (even with `isError`), `{err: message}` otherwise. */
export const CallOutcomeSchema = z.union(
  [z.object({ ok: CallToolResultSchema }), z.object({ err: z.string() })],
  {
    error: "Invalid input: expected {ok: CallToolResult} or {err: string}",
  },
);
export type CallOutcome = z.infer<typeof CallOutcomeSchema>;

/** `<prefix>.events.call.end`: exactly one per begin, same `callId`. */
export const CallEndEventSchema = z.object({
  ...callIdentityShape,
  /** Who answered the call's approval, when a person did (`ApprovalDecideResult.decidedBy`). */
  decidedBy: RequesterSchema.optional(),
  status: z.enum(CallEndStatus),
  durationMs: DurationMsSchema,
  result: CallOutcomeSchema,
});
export type CallEndEvent = z.infer<typeof CallEndEventSchema>;

export const McpToolCallStatus = {
  inProgress: "inProgress",
  completed: "completed",
  failed: "failed",
} as const;
export type McpToolCallStatus = (typeof McpToolCallStatus)[keyof typeof McpToolCallStatus];

/**
 * The history/UI projection of a call (docs/reference-behavior.md §6 `McpToolCallItem`): `inProgress` after
 * begin; after end `completed`, or `failed` with the result (`isError`) or with `error`.
 */
export const McpToolCallItemSchema = z.object({
  id: IdSchema,
  server: ServerNameSchema,
  tool: z.string(),
  arguments: JsonValueSchema,
  connectorId: z.string().optional(),
  mcpAppResourceUri: z.string().optional(),
  linkId: z.string().optional(),
  appName: z.string().optional(),
  actionName: z.string().optional(),
  pluginId: z.string().optional(),
  readOnlyHint: z.boolean().optional(),
  status: z.enum(McpToolCallStatus),
  result: CallToolResultSchema.optional(),
  error: z.object({ message: z.string() }).optional(),
  durationMs: DurationMsSchema.optional(),
});
export type McpToolCallItem = z.infer<typeof McpToolCallItemSchema>;

/** `<prefix>.dispatch.history`: the items of one thread's calls, in the order they began. */
export const DispatchHistoryRequestSchema = z.object({ threadId: IdSchema });
export type DispatchHistoryRequest = z.infer<typeof DispatchHistoryRequestSchema>;

export const DispatchHistoryResultSchema = z.object({ items: z.array(McpToolCallItemSchema) });
export type DispatchHistoryResult = z.infer<typeof DispatchHistoryResultSchema>;

/**
 * Where a resource URI came from (reference `McpResourceOrigin`): the tool call, server and
 * connector that produced it, recorded per call so a later `resources.read` with
 * `originCallId` is served by the same server and account. Not the resource content itself.
 */
import { z } from "zod";
import { IdSchema, ServerNameSchema } from "./primitives.js";

export const McpResourceOriginSchema = z.object({
  callId: IdSchema,
  turnId: IdSchema.optional(),
  server: ServerNameSchema,
  /** The raw tool name of the call that produced the URI. */
  tool: z.string(),
  connectorId: z.string().optional(),
  linkId: z.string().optional(),
  uri: z.string(),
  /** True when more than one account could own the URI, so the origin cannot decide it. */
  ambiguousAccount: z.boolean(),
});
export type McpResourceOrigin = z.infer<typeof McpResourceOriginSchema>;

/** The origins a thread has recorded, saved with its history so reads still resolve later. */
export const McpResourceOriginCheckpointSchema = z.object({
  origins: z.array(McpResourceOriginSchema),
  turns: z.array(IdSchema),
  currentTurnId: IdSchema.optional(),
});
export type McpResourceOriginCheckpoint = z.infer<typeof McpResourceOriginCheckpointSchema>;

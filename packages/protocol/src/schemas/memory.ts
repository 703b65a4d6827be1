/**
 * Memory (docs/contract.md "Memory", docs/reference-behavior.md §9): assistant messages whose citations are
 * counted, the strip request that hides citation markup, and the usage query.
 * The citation itself is defined next to its parser in `../citations/`.
 */
import { z } from "zod";
import { MemoryCitationSchema } from "../citations/memory-citation.js";
import { cappedString, IdSchema, MAX_MEMORY_TEXT_BYTES } from "./primitives.js";

export {
  type MemoryCitation,
  type MemoryCitationEntry,
  MemoryCitationEntrySchema,
  MemoryCitationSchema,
} from "../citations/memory-citation.js";

const MemoryTextSchema = cappedString(MAX_MEMORY_TEXT_BYTES);

/** `<prefix>.memory.message` (stream): counted later, exactly once per `messageId`. */
export const MemoryMessageSchema = z.object({
  messageId: IdSchema,
  threadId: IdSchema.optional(),
  text: MemoryTextSchema,
  /** Plan mode also hides `<proposed_plan>` blocks. */
  planMode: z.boolean().optional(),
});
export type MemoryMessage = z.infer<typeof MemoryMessageSchema>;

export const MemoryStripRequestSchema = z.object({
  text: MemoryTextSchema,
  planMode: z.boolean().optional(),
});
export type MemoryStripRequest = z.infer<typeof MemoryStripRequestSchema>;

export const MemoryStripResultSchema = z.object({
  visibleText: z.string(),
  /** `null` when the text cited no entries and no rollout ids. */
  citation: MemoryCitationSchema.nullable(),
});
export type MemoryStripResult = z.infer<typeof MemoryStripResultSchema>;

export const MAX_USAGE_ROLLOUT_IDS = 1000;
export const MAX_USAGE_LIMIT = 1000;

/** Without `rolloutIds`, the most used rollouts, at most `limit`. */
export const MemoryUsageRequestSchema = z.object({
  rolloutIds: z.array(IdSchema).max(MAX_USAGE_ROLLOUT_IDS).optional(),
  limit: z.int().min(1).max(MAX_USAGE_LIMIT).optional(),
});
export type MemoryUsageRequest = z.infer<typeof MemoryUsageRequestSchema>;

export const RolloutUsageSchema = z.object({
  rolloutId: IdSchema,
  usageCount: z.int().nonnegative(),
  /** Unix seconds of the last counted citation; `null` if never cited. */
  lastUsage: z.int().nonnegative().nullable(),
});
export type RolloutUsage = z.infer<typeof RolloutUsageSchema>;

export const MemoryUsageResultSchema = z.object({ usage: z.array(RolloutUsageSchema) });
export type MemoryUsageResult = z.infer<typeof MemoryUsageResultSchema>;

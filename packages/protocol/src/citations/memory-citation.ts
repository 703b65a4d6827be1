/**
 * The parsed memory citation (docs/contract.md "Memory"): the entries the model cited and the
 * rollout ids it named, exactly as `toolbus.memory.strip` replies with them.
 */
import { z } from "zod";

export const CITATION_OPEN_TAG = "<oai-mem-citation>";
export const CITATION_CLOSE_TAG = "</oai-mem-citation>";

/** Line numbers are Rust u32s: a line citing a larger one is skipped, never clamped. */
const LineNumberSchema = z.int().min(0).max(4_294_967_295);

export const MemoryCitationEntrySchema = z.object({
  path: z.string(),
  lineStart: LineNumberSchema,
  lineEnd: LineNumberSchema,
  note: z.string(),
});
export type MemoryCitationEntry = z.infer<typeof MemoryCitationEntrySchema>;

export const MemoryCitationSchema = z.object({
  entries: z.array(MemoryCitationEntrySchema),
  rolloutIds: z.array(z.string()),
});
export type MemoryCitation = z.infer<typeof MemoryCitationSchema>;

/**
 * `<prefix>.memory.parked` (this service's own subject, not in the contract: the protocol's
 * `internalSubjects(prefix).memoryParked`): the messages that were set aside instead of counted,
 * most recent first, for an operator to inspect.
 */
import { z } from "zod";
import type { UsageStore } from "../ports.js";
import { storeFailureForCaller } from "./store-unavailable.js";

export const DEFAULT_PARKED_LIMIT = 100;

export const MAX_PARKED_LIMIT = 1_000;

export const MemoryParkedRequestSchema = z.object({
  limit: z.int().min(1).max(MAX_PARKED_LIMIT).optional(),
});
export type MemoryParkedRequest = z.infer<typeof MemoryParkedRequestSchema>;

export const ParkedMessageSchema = z.object({
  stream: z.string(),
  streamSequence: z.int().positive(),
  subject: z.string(),
  messageId: z.string().nullable(),
  error: z.string(),
  deliveries: z.int().nonnegative(),
  /** Unix seconds. */
  parkedAt: z.int().nonnegative(),
  payloadBytes: z.int().nonnegative(),
  /** The payload as text, cut after 1,000 characters (marked with `…`). */
  payloadPreview: z.string(),
});

export const MemoryParkedResultSchema = z.object({ parked: z.array(ParkedMessageSchema) });
export type MemoryParkedResult = z.infer<typeof MemoryParkedResultSchema>;

export async function parked(
  request: MemoryParkedRequest,
  ports: { store: UsageStore },
): Promise<MemoryParkedResult> {
  try {
    return { parked: await ports.store.parked(request.limit ?? DEFAULT_PARKED_LIMIT) };
  } catch (err) {
    throw storeFailureForCaller(err, "parked messages");
  }
}

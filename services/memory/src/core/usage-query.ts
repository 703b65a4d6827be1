/**
 * Reading a `toolbus.memory.usage` request: either the rows of the named rollouts, or the
 * most used rollouts in the phase-2 ranking order (docs/reference-behavior.md §9 "How usage is consumed").
 */
import { canonicalUuid, type MemoryUsageRequest } from "@toolbus/protocol";

export const DEFAULT_USAGE_LIMIT = 20;

export type UsageQuery =
  | {
      kind: "ids";
      /** De-duplicated; UUIDs in canonical form, the key usage is written under. */
      ids: string[];
      /** Only when the request gave one. */
      limit?: number;
    }
  | { kind: "top"; limit: number };

export function usageQuery(request: MemoryUsageRequest): UsageQuery {
  if (request.rolloutIds === undefined) {
    return { kind: "top", limit: request.limit ?? DEFAULT_USAGE_LIMIT };
  }
  const ids = [...new Set(request.rolloutIds.map((id) => canonicalUuid(id) ?? id))];
  return request.limit === undefined ? { kind: "ids", ids } : { kind: "ids", ids, limit: request.limit };
}

/**
 * `toolbus.memory.usage`: usage counts of the named rollouts, or of the most used ones. The
 * database being unreachable is `server_unavailable` (retryable), never a timeout.
 */
import type { MemoryUsageRequest, MemoryUsageResult } from "@toolbus/protocol";
import { usageQuery } from "../core/usage-query.js";
import type { UsageStore } from "../ports.js";
import { storeFailureForCaller } from "./store-unavailable.js";

export async function usage(
  request: MemoryUsageRequest,
  ports: { store: UsageStore },
): Promise<MemoryUsageResult> {
  try {
    return { usage: await ports.store.usage(usageQuery(request)) };
  } catch (err) {
    throw storeFailureForCaller(err, "usage counts");
  }
}

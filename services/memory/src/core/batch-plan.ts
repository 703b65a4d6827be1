/**
 * What one fetched batch of memory messages asks of the database: the messages to count
 * (one per messageId), the poison to park, and the usage increments of the messages the
 * database has not counted before (its processed-ids table decides which those are).
 */
import type { DecodedMessage } from "./memory-message.js";

export interface CountableMessage {
  messageId: string;
  threadIds: string[];
}

export interface PoisonMessage {
  /** Position in the batch. */
  index: number;
  error: string;
  messageId: string | null;
}

export interface BatchPlan {
  /** Messages to count, the first of each messageId in batch order. */
  count: CountableMessage[];
  poison: PoisonMessage[];
  /** Positions whose messageId came earlier in the same batch: acknowledged, never counted. */
  repeats: number[];
}

export function planBatch(decoded: readonly DecodedMessage[]): BatchPlan {
  const plan: BatchPlan = { count: [], poison: [], repeats: [] };
  const seen = new Set<string>();
  decoded.forEach((message, index) => {
    if (!message.ok) {
      plan.poison.push({ index, error: message.error, messageId: message.messageId });
    } else if (seen.has(message.messageId)) {
      plan.repeats.push(index);
    } else {
      seen.add(message.messageId);
      plan.count.push({ messageId: message.messageId, threadIds: message.threadIds });
    }
  });
  return plan;
}

export interface UsageIncrement {
  threadId: string;
  /** How many mentions to add to `usage_count`. */
  count: number;
}

/**
 * The increments for the messages counted now: every mention adds one (`[a, a, b]` adds 2 to
 * a), summed over the messages. Sorted by thread id so concurrent writers lock rows in the
 * same order.
 */
export function usageIncrements(messages: readonly CountableMessage[]): UsageIncrement[] {
  const counts = new Map<string, number>();
  for (const message of messages) {
    for (const threadId of message.threadIds) counts.set(threadId, (counts.get(threadId) ?? 0) + 1);
  }
  return [...counts]
    .map(([threadId, count]) => ({ threadId, count }))
    .sort((a, b) => (a.threadId < b.threadId ? -1 : a.threadId > b.threadId ? 1 : 0));
}

/**
 * What one batch of memory messages asks of the database: the messages to count (one per
 * messageId), the poison to park, and every citation mention as a (messageId, threadId) pair,
 * which the database sums over the messages it has not counted before (its processed-ids
 * table decides which those are).
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

/** Parallel arrays: mention k is `threadIds[k]` cited by `messageIds[k]`. */
export interface Mentions {
  messageIds: string[];
  threadIds: string[];
}

/** Every mention counts once: `[a, a, b]` is three mentions, two of them adding to a. */
export function mentionsOf(messages: readonly CountableMessage[]): Mentions {
  const mentions: Mentions = { messageIds: [], threadIds: [] };
  for (const message of messages) {
    for (const threadId of message.threadIds) {
      mentions.messageIds.push(message.messageId);
      mentions.threadIds.push(threadId);
    }
  }
  return mentions;
}

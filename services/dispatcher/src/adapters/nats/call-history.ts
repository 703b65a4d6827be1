/**
 * The McpToolCallItem history of a thread, replayed from the events stream: an ordered
 * consumer reads `<prefix>.events.call.>` from the start, keeps the thread's begin and end
 * events, and folds them with the core's `reduceCallItems`. Also the `dispatch.history`
 * request and reply, which are the dispatcher's own (not in CONTRACT.md).
 */
import type { Bus } from "@toolbus/bus";
import {
  CallBeginEventSchema,
  type CallEndEvent,
  CallEndEventSchema,
  IdSchema,
  type McpToolCallItem,
  McpToolCallItemSchema,
  type Subjects,
} from "@toolbus/protocol";
import { z } from "zod";
import { reduceCallItems } from "../../core/index.js";

/** `<prefix>.dispatch.history`: the items of one thread's calls, in the order they began. */
export function dispatchHistorySubject(subjects: Subjects): string {
  return `${subjects.prefix}.dispatch.history`;
}

export const DispatchHistoryRequestSchema = z.object({ threadId: IdSchema });
export type DispatchHistoryRequest = z.infer<typeof DispatchHistoryRequestSchema>;

export const DispatchHistoryResultSchema = z.object({ items: z.array(McpToolCallItemSchema) });
export type DispatchHistoryResult = z.infer<typeof DispatchHistoryResultSchema>;

/** How long one batch of the replay may take before the replay gives up. */
const BATCH_EXPIRES_MS = 5_000;
const BATCH_SIZE = 500;

export async function replayThreadItems(deps: {
  bus: Bus;
  subjects: Subjects;
  threadId: string;
}): Promise<McpToolCallItem[]> {
  const { bus, subjects, threadId } = deps;
  const stream = subjects.streams.events.name;
  const filter = callEventsFilter(subjects);
  const jsm = await bus.jsm();
  const info = await jsm.streams.info(stream, { subjects_filter: filter });
  let pending = Object.values(info.state.subjects ?? {}).reduce((sum, count) => sum + count, 0);
  if (pending === 0) return [];

  const events: Array<z.infer<typeof CallBeginEventSchema> | CallEndEvent> = [];
  const consumer = await bus.js().consumers.get(stream, { filter_subjects: filter });
  try {
    while (pending > 0) {
      const batch = await consumer.fetch({
        max_messages: Math.min(pending, BATCH_SIZE),
        expires: BATCH_EXPIRES_MS,
      });
      let received = 0;
      for await (const message of batch) {
        received++;
        pending = message.info.pending;
        const event = parseCallEvent(subjects, message.subject, message.string());
        if (event?.threadId === threadId) events.push(event);
        if (pending === 0) break;
      }
      if (received === 0) break;
    }
  } finally {
    await consumer.delete().catch(() => undefined);
  }
  return reduceCallItems(events);
}

function callEventsFilter(subjects: Subjects): string {
  return `${subjects.prefix}.events.call.>`;
}

/** A stored event, or undefined for one that is not valid JSON or does not match its schema. */
function parseCallEvent(subjects: Subjects, subject: string, text: string) {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (subject === subjects.callBegin) {
    const parsed = CallBeginEventSchema.safeParse(body);
    return parsed.success ? parsed.data : undefined;
  }
  if (subject === subjects.callEnd) {
    const parsed = CallEndEventSchema.safeParse(body);
    return parsed.success ? parsed.data : undefined;
  }
  return undefined;
}

/**
 * The McpToolCallItem history of a thread, read from the events stream by key instead of by
 * scanning it: once JetStream acknowledges a call event of a thread, its stream sequence is
 * written to the call-history bucket under `<thread>.<callId>.<begin|end>` — a call that ends
 * within moments has only its end's entry, holding both sequences (core/history-entries.ts says
 * when each is written). `dispatch.history` lists the thread's keys (a subject filter, so only
 * that thread's), reads each event at its sequence through consumers filtered to call events,
 * and folds them with the core's
 * `reduceCallItems`. The bucket's entries expire with the events they point at.
 */
import { DeliverPolicy } from "@nats-io/jetstream";
import type { Bus, Logger } from "@toolbus/bus";
import {
  type CallBeginEvent,
  CallBeginEventSchema,
  type CallEndEvent,
  CallEndEventSchema,
  kvKeyToken,
  type McpToolCallItem,
  type Subjects,
} from "@toolbus/protocol";
import {
  type CallPhase,
  HistoryEntries,
  type HistoryWrite,
  historySequences,
  reduceCallItems,
} from "../../core/index.js";

/** Index entries a thread's history reads at once. */
const FETCH_CONCURRENCY = 32;
/** Call events of other threads a history read passes over before it starts a consumer anew. */
const MAX_EVENTS_SKIPPED = 256;

/**
 * How long a stored begin waits for its end before it is indexed alone: a call running longer
 * shows in `dispatch.history` as in progress this much later than its begin event is stored.
 */
const BEGIN_INDEX_DELAY_MS = 500;
/** Begins waiting at most (in-flight calls of one replica; beyond it they are written at once). */
const MAX_WAITING_BEGINS = 10_000;

/** Records where each call event of a thread is stored. */
export interface CallHistoryIndex {
  record(threadId: string, callId: string, phase: CallPhase, sequence: number): void;
  /** The service stops: every begin still waiting is written, and each stored from now on at once. */
  stop(): void;
}

export function historyKey(threadId: string, callId: string, phase: CallPhase): string {
  return `${kvKeyToken(threadId)}.${kvKeyToken(callId)}.${phase}`;
}

/** Opens the index; the provisioner gave it the events stream's age, so entries live as long as their events. */
export async function openCallHistoryIndex(deps: {
  bus: Bus;
  subjects: Subjects;
  logger: Logger;
}): Promise<CallHistoryIndex> {
  const kv = await deps.bus.kv(deps.subjects.kv.callHistory);
  const entries = new HistoryEntries({ delayMs: BEGIN_INDEX_DELAY_MS, maxPending: MAX_WAITING_BEGINS });
  let failing = false;
  const store = ({ threadId, callId, phase, value }: HistoryWrite) => {
    kv.put(historyKey(threadId, callId, phase), value).then(
      () => {
        failing = false;
      },
      (error: unknown) => {
        // Logged once per run of failures: the call itself is unaffected, only its history.
        if (failing) return;
        failing = true;
        deps.logger.warn(
          { err: error, threadId, callId, phase },
          "could not index a call event by thread; dispatch.history will miss it",
        );
      },
    );
  };
  // One timer for every waiting begin, armed for the earliest; unreferenced, so it never holds the process.
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const writeDue = (now: number) => {
    for (const write of entries.due(now)) store(write);
  };
  const arm = () => {
    const dueAt = entries.nextDueAt;
    if (timer || dueAt === undefined) return;
    timer = setTimeout(
      () => {
        timer = undefined;
        writeDue(performance.now());
        arm();
      },
      Math.max(0, dueAt - performance.now()),
    ).unref();
  };
  return {
    record(threadId, callId, phase, sequence) {
      // Stopped, a begin is not held: the acks of the last events come while the bus closes.
      const now = stopped ? Number.POSITIVE_INFINITY : performance.now();
      const write =
        phase === "begin"
          ? entries.begun(threadId, callId, sequence, now)
          : entries.ended(threadId, callId, sequence);
      if (write) store(write);
      if (stopped) writeDue(now);
      else arm();
    },
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      writeDue(Number.POSITIVE_INFINITY);
    },
  };
}

export async function replayThreadItems(deps: {
  bus: Bus;
  subjects: Subjects;
  threadId: string;
}): Promise<McpToolCallItem[]> {
  const { bus, subjects, threadId } = deps;
  const kv = await bus.kv(subjects.kv.callHistory);
  const keys: string[] = [];
  for await (const key of await kv.keys(`${kvKeyToken(threadId)}.>`)) keys.push(key);

  // An end's entry may also hold its begin's sequence, which a begin's own entry may hold too.
  const pointers = new Map<number, string>();
  for (let start = 0; start < keys.length; start += FETCH_CONCURRENCY) {
    const batch = keys.slice(start, start + FETCH_CONCURRENCY);
    const entries = await Promise.all(batch.map((key) => kv.get(key)));
    entries.forEach((entry, index) => {
      if (entry?.operation !== "PUT") return;
      for (const sequence of historySequences(entry.string())) pointers.set(sequence, batch[index] as string);
    });
  }
  const stored = await callEventsAt(bus, subjects, [...pointers.keys()]);
  const found: Array<{ sequence: number; event: CallBeginEvent | CallEndEvent }> = [];
  for (const [sequence, key] of pointers) {
    const message = stored.get(sequence);
    const event = message && parseCallEvent(subjects, message.subject, message.text);
    // A stream made anew restarts its sequences: an index entry from before may point elsewhere.
    if (!event || event.threadId !== threadId || !key.includes(`.${kvKeyToken(event.callId)}.`)) continue;
    found.push({ sequence, event });
  }
  found.sort((a, b) => a.sequence - b.sequence);
  return reduceCallItems(found.map(({ event }) => event));
}

/**
 * The call events stored at `sequences`, read through ordered consumers filtered to the call
 * events (the dispatcher may read nothing else of the stream): one reads on from a sequence while
 * the next one wanted is near, and a new one starts at the next one wanted past a longer gap.
 */
async function callEventsAt(
  bus: Bus,
  subjects: Subjects,
  sequences: readonly number[],
): Promise<Map<number, { subject: string; text: string }>> {
  const wanted = [...new Set(sequences)].sort((a, b) => a - b);
  const found = new Map<number, { subject: string; text: string }>();
  const stream = subjects.streams.events.name;
  let next = 0;
  while (next < wanted.length) {
    const consumer = await bus.js().consumers.getPushConsumer(stream, {
      filter_subject: subjects.callEvents,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: wanted[next],
    } as never);
    if ((await consumer.info(true)).num_pending === 0) break;
    const messages = await consumer.consume();
    let restartAt: number | undefined;
    for await (const message of messages) {
      const sequence = message.seq;
      while (next < wanted.length && (wanted[next] as number) < sequence) next += 1;
      if (wanted[next] === sequence) {
        found.set(sequence, { subject: message.subject, text: message.string() });
        next += 1;
      }
      if (next >= wanted.length || message.info.pending === 0) break;
      if ((wanted[next] as number) - sequence > MAX_EVENTS_SKIPPED) {
        restartAt = next;
        break;
      }
    }
    await messages.close();
    if (restartAt === undefined) break;
  }
  return found;
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

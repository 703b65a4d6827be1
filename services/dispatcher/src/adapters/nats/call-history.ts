/**
 * The McpToolCallItem history of a thread, read from the events stream by key instead of by
 * scanning it: once JetStream acknowledges a call event of a thread, its stream sequence is
 * written to the call-history bucket under `<thread>.<callId>.<begin|end>` — a call that ends
 * within moments has only its end's entry, holding both sequences (core/history-entries.ts says
 * when each is written). `dispatch.history` lists the thread's keys (a subject filter, so only
 * that thread's), fetches each event by its sequence, and folds them with the core's
 * `reduceCallItems`. The bucket's entries expire with the events they point at.
 */
import type { KV } from "@nats-io/kv";
import { type Bus, ensureKv, type Logger, type StreamLimits } from "@toolbus/bus";
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

/** Events a thread's history reads at once. */
const FETCH_CONCURRENCY = 32;

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

/** Opens (or creates) the index; entries live as long as the events stream keeps events. */
export async function openCallHistoryIndex(deps: {
  bus: Bus;
  subjects: Subjects;
  events: StreamLimits;
  logger: Logger;
}): Promise<CallHistoryIndex> {
  const kv = await ensureKv(deps.bus, deps.subjects.kv.callHistory, {
    history: 1,
    ttl: deps.events.maxAgeMs,
    // An entry is ~100 bytes against up to 1 MiB per end event: a sixteenth of the stream is ample.
    max_bytes: Math.max(1024 * 1024, Math.floor(deps.events.maxBytes / 16)),
  });
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
  let kv: KV;
  const jsm = await bus.jsm();
  try {
    await jsm.streams.info(`KV_${subjects.kv.callHistory}`);
    kv = await bus.kvm().open(subjects.kv.callHistory);
  } catch {
    return []; // No dispatcher has indexed a call yet.
  }
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
  const found: Array<{ sequence: number; event: CallBeginEvent | CallEndEvent }> = [];
  const indexed = [...pointers];
  for (let start = 0; start < indexed.length; start += FETCH_CONCURRENCY) {
    const batch = indexed.slice(start, start + FETCH_CONCURRENCY);
    const events = await Promise.all(batch.map(([sequence, key]) => indexedEvent(deps, key, sequence)));
    for (const event of events) if (event) found.push(event);
  }
  found.sort((a, b) => a.sequence - b.sequence);
  return reduceCallItems(found.map(({ event }) => event));
}

/** The event an index entry points at, or undefined when it expired or is not the thread's. */
async function indexedEvent(
  deps: { bus: Bus; subjects: Subjects; threadId: string },
  key: string,
  sequence: number,
): Promise<{ sequence: number; event: CallBeginEvent | CallEndEvent } | undefined> {
  const jsm = await deps.bus.jsm();
  const stored = await jsm.streams
    .getMessage(deps.subjects.streams.events.name, { seq: sequence })
    .catch(() => null);
  if (!stored) return undefined;
  const event = parseCallEvent(deps.subjects, stored.subject, stored.string());
  // A stream made anew restarts its sequences: an index entry from before may point elsewhere.
  if (!event || event.threadId !== deps.threadId || !key.includes(`.${kvKeyToken(event.callId)}.`)) {
    return undefined;
  }
  return { sequence, event };
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

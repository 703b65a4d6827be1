/**
 * The McpToolCallItem history of a thread, read from the events stream by key instead of by
 * scanning it: once JetStream acknowledges a call event of a thread, its stream sequence is
 * written to the call-history bucket under `<thread>.<callId>.<begin|end>`. `dispatch.history`
 * lists the thread's keys (a subject filter, so only that thread's), fetches each event by its
 * sequence, and folds them with the core's `reduceCallItems`. The bucket's entries expire with
 * the events they point at.
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
import { reduceCallItems } from "../../core/index.js";

export type CallPhase = "begin" | "end";

/** Events a thread's history reads at once. */
const FETCH_CONCURRENCY = 32;

/** Records where each call event of a thread is stored. */
export interface CallHistoryIndex {
  record(threadId: string, callId: string, phase: CallPhase, sequence: number): void;
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
  let failing = false;
  return {
    record(threadId, callId, phase, sequence) {
      kv.put(historyKey(threadId, callId, phase), String(sequence)).then(
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

  const found: Array<{ sequence: number; event: CallBeginEvent | CallEndEvent }> = [];
  for (let start = 0; start < keys.length; start += FETCH_CONCURRENCY) {
    const batch = keys.slice(start, start + FETCH_CONCURRENCY);
    const events = await Promise.all(batch.map((key) => indexedEvent(deps, kv, key)));
    for (const event of events) if (event) found.push(event);
  }
  found.sort((a, b) => a.sequence - b.sequence);
  return reduceCallItems(found.map(({ event }) => event));
}

/** The event an index key points at, or undefined when it expired or is not the thread's. */
async function indexedEvent(
  deps: { bus: Bus; subjects: Subjects; threadId: string },
  kv: KV,
  key: string,
): Promise<{ sequence: number; event: CallBeginEvent | CallEndEvent } | undefined> {
  const entry = await kv.get(key);
  const sequence = entry?.operation === "PUT" ? Number(entry.string()) : Number.NaN;
  if (!Number.isSafeInteger(sequence)) return undefined;
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

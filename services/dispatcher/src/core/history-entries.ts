/**
 * When the call-history index is written (adapters/nats/call-history.ts). Each stored event of a
 * thread's call is indexed under `<thread>.<callId>.<begin|end>`, its value the stream sequences
 * the entry stands for. Most calls end within moments of their begin, so a begin waits `delayMs`
 * before it is written: when the end is stored meanwhile, only the end's entry is written, with
 * both sequences (`"<begin> <end>"`), which saves a JetStream write and its acknowledgement per
 * call. A call still running after `delayMs` (waiting for a human, a slow tool) is indexed as
 * begun then, and its end on its own (`"<end>"`) when it comes. An entry is never written twice,
 * so a late write cannot take back what an earlier one said.
 */

/** Which of a call's two events. */
export type CallPhase = "begin" | "end";

/** One write of the index: the entry's key parts and its value. */
export interface HistoryWrite {
  threadId: string;
  callId: string;
  phase: CallPhase;
  value: string;
}

interface PendingBegin {
  threadId: string;
  callId: string;
  sequence: number;
  /** When the begin is written unless its end came first (monotonic ms). */
  dueAt: number;
}

export interface HistoryEntriesOptions {
  delayMs: number;
  /** Begins held at most; one beyond it is written at once, as it would be without this wait. */
  maxPending: number;
}

/**
 * The begins not yet written. Pure: the caller stores each write it is given, and calls `due`
 * when `nextDueAt` comes.
 */
export class HistoryEntries {
  readonly #options: HistoryEntriesOptions;
  /** In the order they were stored, so the due ones are at the front. */
  readonly #pending = new Map<string, PendingBegin>();

  constructor(options: HistoryEntriesOptions) {
    this.#options = options;
  }

  /** The call's begin is stored at `sequence`: written once `delayMs` passes without its end. */
  begun(threadId: string, callId: string, sequence: number, now: number): HistoryWrite | undefined {
    if (this.#pending.size >= this.#options.maxPending) {
      return { threadId, callId, phase: "begin", value: String(sequence) };
    }
    this.#pending.set(entryKey(threadId, callId), {
      threadId,
      callId,
      sequence,
      dueAt: now + this.#options.delayMs,
    });
    return undefined;
  }

  /** The call's end is stored at `sequence`: written now, with its begin's sequence if that still waits. */
  ended(threadId: string, callId: string, sequence: number): HistoryWrite {
    const key = entryKey(threadId, callId);
    const begin = this.#pending.get(key);
    this.#pending.delete(key);
    const value = begin ? `${begin.sequence} ${sequence}` : String(sequence);
    return { threadId, callId, phase: "end", value };
  }

  /** The begins whose wait is over at `now` (every one with `Infinity`, when the service stops). */
  due(now: number): HistoryWrite[] {
    const writes: HistoryWrite[] = [];
    for (const [key, begin] of this.#pending) {
      if (begin.dueAt > now) break;
      this.#pending.delete(key);
      writes.push({
        threadId: begin.threadId,
        callId: begin.callId,
        phase: "begin",
        value: String(begin.sequence),
      });
    }
    return writes;
  }

  /** When the next begin falls due, or undefined when none waits. */
  get nextDueAt(): number | undefined {
    for (const begin of this.#pending.values()) return begin.dueAt;
    return undefined;
  }
}

function entryKey(threadId: string, callId: string): string {
  return JSON.stringify([threadId, callId]);
}

/** The event sequences an index entry holds (`"12"` or `"12 13"`); none for a value that is not one. */
export function historySequences(value: string): number[] {
  const sequences = value.split(" ").map(Number);
  return sequences.length <= 2 &&
    sequences.every((sequence) => Number.isSafeInteger(sequence) && sequence > 0)
    ? sequences
    : [];
}

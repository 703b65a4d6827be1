/**
 * The record a cluster keeps of one call id, so a call runs once however many replicas are
 * asked (a client's retry, a redelivery, a takeover after a process died): created once by the
 * instance that runs the call, then replaced by the outcome. Pure: what a record means for a
 * request that finds it.
 *
 * An outcome too large for one record is kept as the large reply it was sent as (`stored`: the
 * same recipient role reads it again within the large-replies TTL), or, when that reply was not
 * stored, as a `payload_too_large` refusal (`tooLarge`), so a retry of the callId is answered.
 */
import { isStoredReply, type StoredReply } from "./large-reply.js";

export interface RunningRecord {
  state: "running";
  /** What makes a request the same call (e.g. a digest of tool and arguments). */
  identity: string;
  /** The instance running it (`Bus.instance`). */
  owner: string;
}

export type DoneRecord<T> = {
  state: "done";
  identity: string;
  owner: string;
} & ({ outcome: T } | { stored: StoredReply } | { tooLarge: { message: string } });

export type CallRecord<T> = RunningRecord | DoneRecord<T>;

/** What a request finds, and so what it must do. */
export type Finding<T> =
  /** No record: nobody has run it (or its record expired). Claim it, then run it. */
  | { kind: "absent" }
  /** The call id was used for another call: refuse, run nothing. */
  | { kind: "reused" }
  /** It ran: answer its outcome. */
  | { kind: "done"; outcome: T }
  /** It ran, and its reply is stored: answer with the stored reply. */
  | { kind: "stored"; reply: StoredReply }
  /** It ran, and its outcome was too large to keep: answer `payload_too_large` with `message`. */
  | { kind: "too_large"; message: string }
  /** Someone runs it: wait for the outcome while the owner lives; take it over if it died. */
  | { kind: "running"; owner: string };

export function findingOf<T>(record: CallRecord<T> | undefined, identity: string): Finding<T> {
  if (record === undefined) return { kind: "absent" };
  if (record.identity !== identity) return { kind: "reused" };
  if (record.state === "running") return { kind: "running", owner: record.owner };
  return outcomeOf(record);
}

/** What a done record answers. */
export function outcomeOf<T>(
  record: DoneRecord<T>,
):
  | { kind: "done"; outcome: T }
  | { kind: "stored"; reply: StoredReply }
  | { kind: "too_large"; message: string } {
  if ("stored" in record) return { kind: "stored", reply: record.stored };
  if ("tooLarge" in record) return { kind: "too_large", message: record.tooLarge.message };
  return { kind: "done", outcome: record.outcome };
}

/** A stored value as a record, or undefined for one that is not (a foreign or damaged value). */
export function parseCallRecord<T>(text: string): CallRecord<T> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const record = value as { state?: unknown; identity?: unknown; owner?: unknown };
  if (typeof record.identity !== "string" || typeof record.owner !== "string") return undefined;
  if (record.state === "running") return { state: "running", identity: record.identity, owner: record.owner };
  if (record.state !== "done") return undefined;
  const done = record as Record<string, unknown>;
  if ("outcome" in done) return record as unknown as DoneRecord<T>;
  if (isStoredReply(done.stored)) return record as unknown as DoneRecord<T>;
  const tooLarge = done.tooLarge as { message?: unknown } | undefined;
  if (typeof tooLarge?.message === "string") return record as unknown as DoneRecord<T>;
  return undefined;
}

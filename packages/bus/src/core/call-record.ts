/**
 * The record a cluster keeps of one call id, so a call runs once however many replicas are
 * asked (a client's retry, a redelivery, a takeover after a process died): created once by the
 * instance that runs the call, then replaced by the outcome. Pure: what a record means for a
 * request that finds it.
 */

export interface RunningRecord {
  state: "running";
  /** What makes a request the same call (e.g. a digest of tool and arguments). */
  identity: string;
  /** The instance running it (`Bus.instance`). */
  owner: string;
}

export interface DoneRecord<T> {
  state: "done";
  identity: string;
  owner: string;
  outcome: T;
}

export type CallRecord<T> = RunningRecord | DoneRecord<T>;

/** What a request finds, and so what it must do. */
export type Finding<T> =
  /** No record: nobody has run it (or its record expired). Claim it, then run it. */
  | { kind: "absent" }
  /** The call id was used for another call: refuse, run nothing. */
  | { kind: "reused" }
  /** It ran: answer its outcome. */
  | { kind: "done"; outcome: T }
  /** Someone runs it: wait for the outcome while the owner lives; take it over if it died. */
  | { kind: "running"; owner: string };

export function findingOf<T>(record: CallRecord<T> | undefined, identity: string): Finding<T> {
  if (record === undefined) return { kind: "absent" };
  if (record.identity !== identity) return { kind: "reused" };
  return record.state === "done"
    ? { kind: "done", outcome: record.outcome }
    : { kind: "running", owner: record.owner };
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
  if (record.state === "done" && "outcome" in record) return record as unknown as DoneRecord<T>;
  return undefined;
}

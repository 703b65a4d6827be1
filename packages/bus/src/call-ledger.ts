/**
 * Calls that run once across a cluster: a KV bucket with one record per call id, created once
 * (an atomic `create`) by the instance that runs the call and replaced by its outcome. Another
 * replica asked for the same call id — a client's retry, a request re-sent after its process
 * died — finds the record: the outcome, a refusal (the id was used for another call), or a call
 * still running, which it waits for while the owner lives (`$SRV.PING.<owner>` answers).
 *
 * `watchedRequest` is the caller's side: a request whose record shows the answer was lost (the
 * record is done, absent, or owned by a process that died) is sent again, and the ledger of the
 * service that answers it makes the second send safe.
 */
import { createHash } from "node:crypto";
import type { KV } from "@nats-io/kv";
import { NoRespondersError } from "@nats-io/transport-node";
import { WireError } from "@toolbus/protocol";
import type { z } from "zod";
import type { Bus } from "./bus.js";
import { type CallRecord, type Finding, findingOf, parseCallRecord } from "./core/call-record.js";
import type { RequestOptions } from "./request.js";

/** JetStream's "wrong last sequence": a `create` found the key, an `update` lost the race. */
const WRONG_LAST_SEQUENCE = 10071;

/** A call id as a KV key: ids of plain characters as they are, any other as `=` + its SHA-256. */
export function callKey(callId: string): string {
  if (/^[A-Za-z0-9_-]{1,200}$/.test(callId)) return callId;
  return `=${createHash("sha256").update(callId).digest("hex")}`;
}

/** Whether an instance (`Bus.instance`) still runs: `dead` only when nobody answers its ping. */
export async function instanceAlive(
  bus: Bus,
  instance: string,
  timeoutMs = 1_000,
): Promise<"alive" | "dead" | "unknown"> {
  try {
    await bus.nc.request(`$SRV.PING.${instance}`, "", { timeout: timeoutMs });
    return "alive";
  } catch (error) {
    const cause = error instanceof Error ? error.cause : undefined;
    if (error instanceof NoRespondersError || cause instanceof NoRespondersError) return "dead";
    if (error instanceof Error && /no responders/i.test(error.message)) return "dead";
    return "unknown";
  }
}

export type Claim<T> =
  | { kind: "claimed" }
  | { kind: "reused" }
  | { kind: "done"; outcome: T }
  | { kind: "running"; owner: string };

/** What waiting for another instance's run came to. */
export type WaitOutcome<T> =
  | { kind: "done"; outcome: T }
  | { kind: "reused" }
  /** Its owner died; this instance now owns the record and must run the call. */
  | { kind: "taken_over" }
  /** Its owner died, and `orphaned` said what that means; this is now the call's outcome. */
  | { kind: "orphaned"; outcome: T }
  | { kind: "timeout" };

/** What a handler needs of a ledger (a port: `CallLedger` implements it). */
export interface CallLedgerPort<T> {
  claim(callId: string, identity: string): Promise<Claim<T>>;
  await(callId: string, identity: string, timeoutMs: number, signal?: AbortSignal): Promise<WaitOutcome<T>>;
  finish(callId: string, identity: string, outcome: T): Promise<void>;
  release(callId: string): Promise<void>;
}

export interface CallLedgerOptions<T> {
  bus: Bus;
  kv: KV;
  /**
   * What to do with a call whose owner died while it ran: `take over` when running it again is
   * safe (what it calls is itself once-only), or the outcome to record for good when it is not.
   */
  onOrphan: "take over" | ((owner: string) => T);
  /** How often a waiting request polls the record and pings its owner (default 250 ms, 2 s). */
  pollMs?: number;
  pingEveryMs?: number;
}

export class CallLedger<T> implements CallLedgerPort<T> {
  readonly #bus: Bus;
  readonly #kv: KV;
  readonly #options: CallLedgerOptions<T>;

  constructor(options: CallLedgerOptions<T>) {
    this.#bus = options.bus;
    this.#kv = options.kv;
    this.#options = options;
  }

  /** Claims the call for this instance, or says what another instance's record holds. */
  async claim(callId: string, identity: string): Promise<Claim<T>> {
    const record: CallRecord<T> = { state: "running", identity, owner: this.#bus.instance };
    try {
      await this.#kv.create(callKey(callId), JSON.stringify(record));
      return { kind: "claimed" };
    } catch (error) {
      if (!isWrongLastSequence(error)) throw error;
    }
    const finding = await this.read(callId, identity);
    // Expired between the create and the read: claim again (bounded: a record lives for minutes).
    if (finding.kind === "absent") return this.claim(callId, identity);
    return finding;
  }

  async read(callId: string, identity: string): Promise<Finding<T>> {
    const entry = await this.#kv.get(callKey(callId));
    const record = entry && entry.operation === "PUT" ? parseCallRecord<T>(entry.string()) : undefined;
    return findingOf(record, identity);
  }

  /** Records the outcome of a call this instance claimed. */
  async finish(callId: string, identity: string, outcome: T): Promise<void> {
    const record: CallRecord<T> = { state: "done", identity, owner: this.#bus.instance, outcome };
    await this.#kv.put(callKey(callId), JSON.stringify(record));
  }

  /** Forgets a claim whose call never ran (so a retry may run it). */
  async release(callId: string): Promise<void> {
    await this.#kv.delete(callKey(callId));
  }

  /** Waits while another instance runs the call; takes it over (or records it orphaned) if that one died. */
  async await(
    callId: string,
    identity: string,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<WaitOutcome<T>> {
    const key = callKey(callId);
    const deadline = Date.now() + timeoutMs;
    const pollMs = this.#options.pollMs ?? 250;
    const pingEveryMs = this.#options.pingEveryMs ?? 2_000;
    let lastPing = Date.now();
    while (Date.now() < deadline && !signal?.aborted) {
      const entry = await this.#kv.get(key);
      const record = entry && entry.operation === "PUT" ? parseCallRecord<T>(entry.string()) : undefined;
      const finding = findingOf(record, identity);
      if (finding.kind === "done" || finding.kind === "reused") return finding;
      if (finding.kind === "absent") {
        // Expired or released: whoever claims it now runs it.
        const claim = await this.claim(callId, identity);
        if (claim.kind === "claimed") return { kind: "taken_over" };
        if (claim.kind !== "running") return claim;
        continue;
      }
      if (Date.now() - lastPing >= pingEveryMs) {
        lastPing = Date.now();
        if ((await instanceAlive(this.#bus, finding.owner)) === "dead" && entry) {
          const orphan = this.#options.onOrphan;
          const mine: CallRecord<T> =
            orphan === "take over"
              ? { state: "running", identity, owner: this.#bus.instance }
              : { state: "done", identity, owner: finding.owner, outcome: orphan(finding.owner) };
          try {
            await this.#kv.update(key, JSON.stringify(mine), entry.revision);
          } catch (error) {
            if (isWrongLastSequence(error)) continue; // another replica got there first
            throw error;
          }
          return mine.state === "running"
            ? { kind: "taken_over" }
            : { kind: "orphaned", outcome: mine.outcome };
        }
      }
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
    return { kind: "timeout" };
  }
}

function isWrongLastSequence(error: unknown): boolean {
  const code = (error as { code?: unknown; api_error?: { err_code?: unknown } } | null)?.api_error?.err_code;
  return (
    code === WRONG_LAST_SEQUENCE || (error instanceof Error && /wrong last sequence/i.test(error.message))
  );
}

/** How a caller watches the record of the call it asked for (read-only access suffices). */
export interface WatchedRecord {
  /** The record's state: absent, running (with its owner), or done. */
  read(): Promise<{ state: "absent" } | { state: "running"; owner: string } | { state: "done" }>;
}

/** Reads another service's call records (for `watchedRequest`). */
export function watchedRecord(kv: KV, callId: string): WatchedRecord {
  return {
    async read() {
      const entry = await kv.get(callKey(callId));
      const record =
        entry && entry.operation === "PUT" ? parseCallRecord<unknown>(entry.string()) : undefined;
      if (record === undefined) return { state: "absent" };
      return record.state === "running" ? { state: "running", owner: record.owner } : { state: "done" };
    },
  };
}

/**
 * `bus.request`, sent again while its answer may have been lost: every `checkEveryMs` the call's
 * record is read, and a record that is done, absent for two checks running, or owned by an
 * instance that no longer answers means the answer will not come on the first send. The service
 * answers each send from its ledger, so a call runs once whichever send it sees.
 */
export async function watchedRequest<S extends z.ZodType>(
  bus: Bus,
  subject: string,
  body: unknown,
  schema: S,
  options: RequestOptions & {
    timeoutMs: number;
    record: WatchedRecord;
    checkEveryMs?: number;
    maxSends?: number;
  },
): Promise<z.output<S>> {
  const checkEveryMs = options.checkEveryMs ?? 2_000;
  const maxSends = options.maxSends ?? 5;
  const deadline = Date.now() + options.timeoutMs;
  const sends: Array<Promise<z.output<S>>> = [];
  const send = () => {
    const remaining = Math.max(1, deadline - Date.now());
    sends.push(bus.request(subject, body, schema, { ...options, timeoutMs: remaining }));
  };
  send();
  let absentChecks = 0;
  let settled = false;
  const first = new Promise<z.output<S>>((resolve, reject) => {
    let unanswered = 0;
    const watch = (promise: Promise<z.output<S>>) =>
      promise.then(
        (value) => {
          settled = true;
          resolve(value);
        },
        (error: unknown) => {
          // An answer, even an error, is the call's: only a send nobody answered leaves room for another.
          const unansweredSend =
            error instanceof WireError && (error.code === "timeout" || error.code === "server_unavailable");
          if (unansweredSend && ++unanswered < sends.length) return;
          settled = true;
          reject(error);
        },
      );
    watch(sends[0] as Promise<z.output<S>>);
    const check = async () => {
      while (!settled && Date.now() < deadline && sends.length < maxSends) {
        // Unreferenced: a settled call leaves no timer holding the process open.
        await new Promise((r) => setTimeout(r, checkEveryMs).unref());
        if (settled) return;
        const state = await options.record.read().catch(() => undefined);
        if (state === undefined) continue;
        let again = false;
        if (state.state === "done") again = true;
        else if (state.state === "absent") again = ++absentChecks >= 2;
        else {
          absentChecks = 0;
          again = (await instanceAlive(bus, state.owner)) === "dead";
        }
        if (again && !settled) {
          absentChecks = 0;
          send();
          watch(sends[sends.length - 1] as Promise<z.output<S>>);
        }
      }
    };
    void check();
  });
  return first;
}

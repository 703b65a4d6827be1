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
import type { KV, KvEntry } from "@nats-io/kv";
import { NoRespondersError } from "@nats-io/transport-node";
import { callOutcomeTooLarge, WireError } from "@toolbus/protocol";
import type { z } from "zod";
import type { Bus } from "./bus.js";
import {
  type CallRecord,
  type DoneRecord,
  type Finding,
  findingOf,
  outcomeOf,
  parseCallRecord,
} from "./core/call-record.js";
import { isTransient, jetStreamFailureOf } from "./core/jetstream-failure.js";
import type { StoredReply } from "./core/large-reply.js";
import type { RequestOptions } from "./request.js";

/** JetStream's "wrong last sequence": a `create` found the key, an `update` lost the race. */
const WRONG_LAST_SEQUENCE = 10071;
/** Room below max_payload a record leaves for its KV subject and headers. */
const RECORD_HEADROOM_BYTES = 1024;

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

/** What a finished call answers: its outcome, the large reply it was sent as, or a refusal. */
export type Answered<T> =
  | { kind: "done"; outcome: T }
  | { kind: "stored"; reply: StoredReply }
  | { kind: "too_large"; message: string };

export type Claim<T> =
  | { kind: "claimed" }
  | { kind: "reused" }
  | Answered<T>
  | { kind: "running"; owner: string };

/** What waiting for another instance's run came to. */
export type WaitOutcome<T> =
  | Answered<T>
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
  /** `stored`: where the reply carrying `outcome` was stored (`HandlerContext.sent`), if it was. */
  finish(callId: string, identity: string, outcome: T, stored?: StoredReply): Promise<void>;
  release(callId: string): Promise<void>;
}

export interface CallLedgerOptions<T> {
  bus: Bus;
  kv: KV;
  /**
   * Put before every key (`github.`): a connector's records live under its own server, where its
   * identity may write and no other connector's can.
   */
  keyPrefix?: string;
  /**
   * What to do with a call whose owner died while it ran: `take over` when running it again is
   * safe (what it calls is itself once-only), or the outcome to record for good when it is not.
   */
  onOrphan: "take over" | ((owner: string) => T);
  /** How often a waiting request polls the record and pings its owner (default 250 ms, 2 s). */
  pollMs?: number;
  pingEveryMs?: number;
  /**
   * How long an owner must go unanswered before it counts as dead (default 6 s): a process whose
   * NATS node died is out of reach while it reconnects to another, yet alive and running its calls.
   */
  deadAfterMs?: number;
  /** How long this instance keeps trying to record an outcome or drop a claim (default 5 min). */
  recordForMs?: number;
}

export class CallLedger<T> implements CallLedgerPort<T> {
  readonly #bus: Bus;
  readonly #kv: KV;
  readonly #options: CallLedgerOptions<T>;
  /**
   * The keys of the calls this instance runs now. A record that names this instance as its owner
   * but is not here is stale — a `create` whose answer was lost, a release that did not reach
   * JetStream — and the call in it never ran here: it may be claimed again.
   */
  readonly #running = new Set<string>();
  /** Outcomes not yet recorded (JetStream did not take them yet): answered from here meanwhile. */
  readonly #unrecorded = new Map<string, DoneRecord<T>>();
  /** Keys whose possibly stored claim is being dropped in the background. */
  readonly #dropping = new Set<string>();

  constructor(options: CallLedgerOptions<T>) {
    this.#bus = options.bus;
    this.#kv = options.kv;
    this.#options = options;
  }

  #key(callId: string): string {
    return `${this.#options.keyPrefix ?? ""}${callKey(callId)}`;
  }

  /** Claims the call for this instance, or says what another instance's record holds. */
  async claim(callId: string, identity: string): Promise<Claim<T>> {
    const key = this.#key(callId);
    const remembered = this.#remembered(key, identity);
    if (remembered) return remembered;
    const record: CallRecord<T> = { state: "running", identity, owner: this.#bus.instance };
    try {
      await this.#kv.create(key, JSON.stringify(record));
      this.#answered(key);
      this.#running.add(key);
      return { kind: "claimed" };
    } catch (error) {
      if (!isWrongLastSequence(error)) {
        this.#answered(key, error);
        // The create may have been stored though its answer was lost: drop it if it was.
        this.#dropStaleClaim(key);
        throw error;
      }
      this.#answered(key);
    }
    const entry = await this.#get(key);
    const finding = findingOf(recordOf<T>(entry), identity);
    // Expired between the create and the read: claim again (bounded: a record lives for minutes).
    if (finding.kind === "absent") return this.claim(callId, identity);
    if (finding.kind === "running" && entry && this.#isStale(key, finding.owner)) {
      return (await this.#takeOver(key, identity, entry.revision))
        ? { kind: "claimed" }
        : this.claim(callId, identity);
    }
    return finding;
  }

  async read(callId: string, identity: string): Promise<Finding<T>> {
    const entry = await this.#get(this.#key(callId));
    const record = recordOf<T>(entry);
    return findingOf(record, identity);
  }

  /**
   * Records the outcome of a call this instance claimed: tried until JetStream takes it (a node
   * lost, a leader being elected), answering a repeat of the call from memory meanwhile. An
   * outcome too large for one record is recorded as the stored reply that carried it, or as a
   * `payload_too_large` refusal when its reply was not stored.
   */
  async finish(callId: string, identity: string, outcome: T, stored?: StoredReply): Promise<void> {
    const key = this.#key(callId);
    const { record, text } = this.#doneRecord(identity, outcome, stored);
    this.#unrecorded.set(key, record);
    try {
      await this.#untilStored(key, async () => {
        await this.#kv.put(key, text);
        this.#answered(key);
      });
    } finally {
      this.#unrecorded.delete(key);
      this.#running.delete(key);
    }
  }

  /** The done record of an outcome, and its text: one that fits in a KV message. */
  #doneRecord(identity: string, outcome: T, stored?: StoredReply): { record: DoneRecord<T>; text: string } {
    const owner = this.#bus.instance;
    if (stored) {
      // Its reply was larger than one message, and so is a record holding it: not even tried.
      const record: DoneRecord<T> = { state: "done", identity, owner, stored };
      return { record, text: JSON.stringify(record) };
    }
    const full: DoneRecord<T> = { state: "done", identity, owner, outcome };
    const text = JSON.stringify(full);
    const limit = this.#bus.nc.info?.max_payload ?? 1024 * 1024;
    const bytes = Buffer.byteLength(text);
    // Room for the KV subject and headers; a put over max_payload fails the same way every time.
    if (bytes <= limit - RECORD_HEADROOM_BYTES) return { record: full, text };
    const record: DoneRecord<T> = {
      state: "done",
      identity,
      owner,
      tooLarge: { message: callOutcomeTooLarge({ bytes, limit }) },
    };
    return { record, text: JSON.stringify(record) };
  }

  /**
   * Forgets a claim whose call never ran (so a retry may run it), tried until JetStream takes it.
   * Until then the record is stale, and a repeat of the call sent here claims it again at once.
   */
  async release(callId: string): Promise<void> {
    const key = this.#key(callId);
    this.#running.delete(key);
    await this.#dropIfStale(key);
  }

  /** Deletes the key's record if it is this instance's and stale, tried until JetStream answers. */
  async #dropIfStale(key: string): Promise<void> {
    await this.#untilStored(key, async () => {
      const entry = await this.#get(key);
      const record = recordOf<T>(entry);
      if (!entry || record?.state !== "running" || !this.#isStale(key, record.owner)) return;
      try {
        await this.#kv.delete(key, { previousSeq: entry.revision });
        // Only a write tells that JetStream takes this key's writes (a read goes elsewhere).
        this.#answered(key);
      } catch (error) {
        // Changed since it was read: claimed again, so no longer this instance's to drop.
        if (!isWrongLastSequence(error)) throw error;
      }
    });
  }

  /** An outcome this instance holds but JetStream does not have yet, as the record would say it. */
  #remembered(key: string, identity: string): Answered<T> | { kind: "reused" } | undefined {
    const record = this.#unrecorded.get(key);
    if (!record) return undefined;
    return record.identity === identity ? outcomeOf(record) : { kind: "reused" };
  }

  #isStale(key: string, owner: string): boolean {
    return owner === this.#bus.instance && !this.#running.has(key);
  }

  /** Claims a record by its revision (a stale one, or a dead owner's); false when another got there first. */
  async #takeOver(key: string, identity: string, revision: number): Promise<boolean> {
    const mine: CallRecord<T> = { state: "running", identity, owner: this.#bus.instance };
    try {
      await this.#update(key, JSON.stringify(mine), revision);
    } catch (error) {
      if (isWrongLastSequence(error)) return false;
      throw error;
    }
    this.#running.add(key);
    return true;
  }

  /** One background drop per key at most: a call retried while JetStream refuses must not pile them up. */
  #dropStaleClaim(key: string): void {
    if (this.#dropping.has(key)) return;
    this.#dropping.add(key);
    void this.#dropIfStale(key)
      .catch(() => undefined)
      .finally(() => this.#dropping.delete(key));
  }

  /**
   * Reads the key's record. A read that fails counts against the key like a write: on
   * nats-server 2.9.10 the direct get of a key can be refused on one connection for minutes too.
   */
  async #get(key: string): Promise<KvEntry | null> {
    try {
      return await this.#kv.get(key);
    } catch (error) {
      this.#answered(key, error);
      throw error;
    }
  }

  /** Writes the key by revision, telling the bus whether JetStream answered. */
  async #update(key: string, value: string, revision: number): Promise<void> {
    try {
      await this.#kv.update(key, value, revision);
      this.#answered(key);
    } catch (error) {
      this.#answered(key, isWrongLastSequence(error) ? undefined : error);
      throw error;
    }
  }

  /**
   * Tells the bus what became of a request on the key: taken, or the error it failed with (a
   * key nobody answers again and again renews the connection).
   */
  #answered(key: string, failure?: unknown): void {
    this.#bus.jetStreamOutcome(key, failure);
  }

  /**
   * Runs `write` of `key` until it succeeds, backing off, for at most `recordForMs`; then throws
   * its error. A failure that will recur (too large, not permitted, refused by JetStream for what
   * it is) is thrown at once: only one that may pass (unanswered, JetStream unavailable) is retried.
   */
  async #untilStored(key: string, write: () => Promise<unknown>): Promise<void> {
    const deadline = Date.now() + (this.#options.recordForMs ?? 5 * 60_000);
    for (let delayMs = 250; ; delayMs = Math.min(delayMs * 2, 5_000)) {
      try {
        await write();
        return;
      } catch (error) {
        if (isWrongLastSequence(error)) throw error;
        this.#answered(key, error);
        if (!isTransient(jetStreamFailureOf(error))) throw error;
        if (Date.now() + delayMs > deadline || this.#bus.nc.isClosed()) throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }

  /** Waits while another instance runs the call; takes it over (or records it orphaned) if that one died. */
  async await(
    callId: string,
    identity: string,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<WaitOutcome<T>> {
    const key = this.#key(callId);
    const deadline = Date.now() + timeoutMs;
    const pollMs = this.#options.pollMs ?? 250;
    const pingEveryMs = this.#options.pingEveryMs ?? 2_000;
    const deadAfterMs = this.#options.deadAfterMs ?? 6_000;
    let lastPing = Date.now();
    /** When the owner first went unanswered, in the current run of unanswered pings. */
    let unansweredSince: number | undefined;
    while (Date.now() < deadline && !signal?.aborted) {
      const remembered = this.#remembered(key, identity);
      if (remembered) return remembered;
      // JetStream out of reach for a moment (a node lost, a leader being elected): keep waiting.
      const entry = await this.#get(key).catch(() => undefined);
      if (entry === undefined) {
        await sleep(pollMs);
        continue;
      }
      const record = recordOf<T>(entry);
      const finding = findingOf(record, identity);
      if (finding.kind !== "absent" && finding.kind !== "running") return finding;
      if (finding.kind === "absent") {
        // Expired or released: whoever claims it now runs it.
        const claim = await this.claim(callId, identity).catch(() => undefined);
        if (claim?.kind === "claimed") return { kind: "taken_over" };
        if (claim !== undefined && claim.kind !== "running") return claim;
        await sleep(pollMs);
        continue;
      }
      if (entry && this.#isStale(key, finding.owner)) {
        if (await this.#takeOver(key, identity, entry.revision).catch(() => false))
          return { kind: "taken_over" };
        continue;
      }
      if (entry && Date.now() - lastPing >= pingEveryMs) {
        lastPing = Date.now();
        const alive = await instanceAlive(this.#bus, finding.owner);
        if (alive !== "dead") unansweredSince = undefined;
        else unansweredSince ??= Date.now();
        if (unansweredSince !== undefined && Date.now() - unansweredSince >= deadAfterMs) {
          const outcome = await this.#orphan(key, identity, finding.owner, entry.revision).catch(
            () => undefined,
          );
          if (outcome !== undefined) return outcome;
          continue;
        }
      }
      await sleep(pollMs);
    }
    return { kind: "timeout" };
  }

  /** A dead owner's record, taken over or closed with `onOrphan`'s outcome; undefined if another replica came first. */
  async #orphan(
    key: string,
    identity: string,
    owner: string,
    revision: number,
  ): Promise<WaitOutcome<T> | undefined> {
    const orphan = this.#options.onOrphan;
    if (orphan === "take over") {
      return (await this.#takeOver(key, identity, revision)) ? { kind: "taken_over" } : undefined;
    }
    const outcome = orphan(owner);
    const closed: CallRecord<T> = { state: "done", identity, owner, outcome };
    try {
      await this.#update(key, JSON.stringify(closed), revision);
    } catch (error) {
      if (isWrongLastSequence(error)) return undefined;
      throw error;
    }
    return { kind: "orphaned", outcome };
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The call record a KV entry holds; undefined for none, a delete marker or a foreign value. */
function recordOf<T>(entry: KvEntry | null): CallRecord<T> | undefined {
  return entry && entry.operation === "PUT" ? parseCallRecord<T>(entry.string()) : undefined;
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

/** Reads another service's call records (for `watchedRequest`), under its `keyPrefix` if it has one. */
export function watchedRecord(kv: KV, callId: string, keyPrefix = ""): WatchedRecord {
  return {
    async read() {
      const entry = await kv.get(`${keyPrefix}${callKey(callId)}`);
      const record = recordOf<unknown>(entry);
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
  // Sends whose reply came and is still being read (a large one it names takes a while): while
  // one is, no other send is needed. A send whose reply then says it was not taken (another
  // replica's ledger did not answer) no longer counts: an earlier send may still wait for a reply
  // that NATS dropped (one refused after its responder reconnected), and only a new send helps.
  let readingReplies = 0;
  const send = () => {
    const remaining = Math.max(1, deadline - Date.now());
    let replied = false;
    const onReply = () => {
      replied = true;
      readingReplies++;
    };
    const sent = bus.request(subject, body, schema, { ...options, timeoutMs: remaining, onReply });
    sends.push(
      sent.finally(() => {
        if (replied) readingReplies--;
      }),
    );
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
        if (readingReplies > 0) continue;
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

/**
 * Replies larger than one NATS message (`max_payload`): the service that answers stores the
 * serialized envelope in the large-replies stream (`<PREFIX>_LARGE`), in chunks below
 * max_payload addressed to the role that asked (see core/large-reply.ts), and sends a small
 * reply whose `Toolbus-Large-Reply` header names it. The caller's bus reads the chunks in its
 * place by direct get, checks their count, size and SHA-256, and deletes nothing: the stream's
 * max age removes replies, and nobody may delete from it or purge it. A reader that does not
 * know the header still gets a valid `payload_too_large` envelope that says where the reply is.
 *
 * Both sides hold the reply's bytes against the process's budget (large-reply-budget.ts).
 */
import { createHash } from "node:crypto";
import type { JetStreamClient, JetStreamManager, StoredMsg } from "@nats-io/jetstream";
import { type Msg, nuid } from "@nats-io/transport-node";
import type { Subjects } from "@toolbus/protocol";
import type { Logger } from "pino";
import {
  chunkBytes,
  chunkCount,
  chunkSubject,
  parseStoredReply,
  type StoredReply,
  subjectsOf,
} from "./core/large-reply.js";
import type { StreamLimits } from "./core/stream-limits.js";
import {
  LARGE_REPLIES_BUDGET,
  LARGE_REPLY_HOLDS,
  type LargeRepliesBudget,
  type LargeReplyHold,
} from "./large-reply-budget.js";
import { BUS_METRICS } from "./metrics.js";
import type { LateReply } from "./reply-inbox.js";

/** Where an endpoint stores replies too large for one message (`EndpointSpec.largeReplies`). */
export interface LargeReplyOptions {
  /** The subject prefix: chunks go to `<prefix>.large.<recipient>.<id>.<index>`. */
  prefix: string;
  /** The stream (`Subjects.streams.large.name`). */
  stream: string;
  /** How long a stored reply waits for its caller; the stream's max age. */
  ttlMs: number;
  /** The stream's size limit; a reply that would pass it is refused, not stored. */
  maxBytes: number;
}

/** The options of the large-replies stream, from the prefix's names and the `[bus]` table's limits. */
export function largeReplyOptions(
  subjects: Pick<Subjects, "prefix" | "streams">,
  limits: StreamLimits,
): LargeReplyOptions {
  return {
    prefix: subjects.prefix,
    stream: subjects.streams.large.name,
    ttlMs: limits.maxAgeMs,
    maxBytes: limits.maxBytes,
  };
}

/** Chunks published, or read, at once: enough to hide round trips, few enough to hold little. */
const CHUNK_WINDOW = 4;

export class LargeReplies {
  readonly #jsm: () => Promise<JetStreamManager>;
  readonly #js: () => JetStreamClient;
  readonly #maxPayload: () => number;
  readonly #budget: LargeRepliesBudget;

  constructor(
    /** This identity's JetStream (its account's API prefix, no `$JS.API.INFO` check). */
    jsm: () => Promise<JetStreamManager>,
    js: () => JetStreamClient,
    maxPayload: () => number,
    /** The name this identity's requests give as their reader (`Toolbus-Reader`). */
    readonly reader: string,
    budget: LargeRepliesBudget = LARGE_REPLIES_BUDGET,
  ) {
    this.#jsm = jsm;
    this.#js = js;
    this.#maxPayload = maxPayload;
    this.#budget = budget;
  }

  /**
   * Holds the bytes of a reply about to be stored: at once when they fit, or when the request
   * being answered holds large replies it read (`hold`: the reply takes their place); else the
   * caller gets `wait`, and should let go of what it holds while it waits. Throws a
   * `LargeRepliesBudgetError` (at once, or from `wait`) when the budget cannot take it.
   */
  reserve(
    bytes: number,
    hold?: LargeReplyHold,
  ): { release: () => void } | { wait: () => Promise<() => void> } {
    if (hold !== undefined && hold.bytes > 0) {
      return { release: this.#budget.force(Math.max(0, bytes - hold.bytes)) };
    }
    if (bytes > this.#budget.limit) {
      // Refused at once, with the budget's own words.
      return { wait: () => this.#budget.take(bytes) };
    }
    const release = this.#budget.tryTake(bytes);
    return release ? { release } : { wait: () => this.#budget.take(bytes) };
  }

  /**
   * Stores `payload` for `recipient`, the reader its request names; resolves with what the
   * header says. Its bytes must be held (`reserve`) by the caller.
   */
  async store(options: LargeReplyOptions, payload: string, recipient: string): Promise<StoredReply> {
    const bytes = Buffer.byteLength(payload);
    const size = chunkBytes(this.#maxPayload());
    const chunks = encodedChunks(payload, size);
    const reply: StoredReply = {
      prefix: options.prefix,
      recipient,
      id: nuid.next(),
      chunks: chunkCount(bytes, size),
      bytes,
      sha256: "",
    };
    const hash = createHash("sha256");
    const js = this.#js();
    let published = 0;
    // One chunk encoded at a time, published in order, a few acks awaited at once: the reply is
    // never copied whole. The digest goes in the header, which is sent after the last chunk.
    const acks: Array<Promise<unknown>> = [];
    for (const chunk of chunks) {
      hash.update(chunk);
      const ack = js.publish(chunkSubject(reply, published++), chunk, {
        expect: { streamName: options.stream },
      });
      ack.catch(() => undefined);
      acks.push(ack);
      if (acks.length >= CHUNK_WINDOW) await acks.shift();
    }
    for (const ack of acks) await ack;
    if (published !== reply.chunks) {
      throw new Error(`the reply was cut in ${published} chunks, not the ${reply.chunks} its size makes`);
    }
    return { ...reply, sha256: hash.digest("hex") };
  }

  /**
   * Reads the reply a header names, addressed to this identity; throws an Error saying why it
   * cannot (a `LargeRepliesBudgetError` when the budget has no room for it).
   */
  async read(header: string): Promise<string> {
    const reply = parseStoredReply(header);
    if (typeof reply === "string") throw new Error(reply);
    const mine = this.reader;
    if (reply.recipient !== mine) {
      throw new Error(
        `it is addressed to ${reply.recipient}, and this identity reads the replies addressed to ${mine}`,
      );
    }
    // The reader's own names for the prefix, not the header's say-so.
    const stream = subjectsOf(reply.prefix).streams.large.name;
    const release = await this.#budget.take(reply.bytes);
    try {
      const jsm = await this.#jsm();
      const buffer = Buffer.allocUnsafe(reply.bytes);
      const hash = createHash("sha256");
      let offset = 0;
      await inOrder(
        reply.chunks,
        (index) => jsm.direct.getMessage(stream, { last_by_subj: chunkSubject(reply, index) }),
        (message: StoredMsg | null, index) => {
          if (message === null) {
            throw new Error(
              `chunk ${index} of ${reply.chunks} is not in the stream ${stream}: the reply expired before it was read ([bus] large_reply_ttl_sec)`,
            );
          }
          const { data } = message;
          if (offset + data.length > reply.bytes) {
            throw new Error(`its chunks hold more than the ${reply.bytes} bytes its header names`);
          }
          buffer.set(data, offset);
          hash.update(data);
          offset += data.length;
        },
      );
      if (offset !== reply.bytes) {
        throw new Error(`its chunks hold ${offset} bytes, and its header names ${reply.bytes}`);
      }
      if (hash.digest("hex") !== reply.sha256) {
        throw new Error("the SHA-256 of its chunks differs from its header's: the stored reply is damaged");
      }
      const text = buffer.toString("utf8");
      // Read while a request is served: held until it is answered, as the handler works on it.
      // Otherwise held until the caller's own work on it in this turn (parse it, send it on) is done.
      const hold = LARGE_REPLY_HOLDS.getStore();
      if (hold) hold.add(reply.bytes, release);
      else setImmediate(release);
      return text;
    } catch (error) {
      release();
      throw error;
    }
  }
}

/**
 * The UTF-8 encoding of `text` in chunks of `size` bytes (the last may be shorter), each encoded
 * when asked for: a character is never split, since each chunk is cut at a byte boundary of the
 * whole encoding, not of the characters.
 */
function* encodedChunks(text: string, size: number): Generator<Uint8Array> {
  const encoder = new TextEncoder();
  // Up to 3 bytes per UTF-16 unit; a chunk is filled from a slice that surely holds enough.
  let pending: Uint8Array = new Uint8Array(0);
  for (let at = 0; at < text.length || pending.length > 0; ) {
    while (pending.length < size && at < text.length) {
      const slice = text.slice(at, at + size);
      const encoded = encoder.encode(slice);
      at += slice.length;
      // A surrogate pair cut by the slice: keep its high half for the next slice.
      const last = slice.charCodeAt(slice.length - 1);
      if (last >= 0xd800 && last <= 0xdbff && at < text.length) {
        at -= 1;
        const whole = encoder.encode(slice.slice(0, -1));
        pending = joined(pending, whole);
        continue;
      }
      pending = joined(pending, encoded);
    }
    yield pending.subarray(0, size);
    pending = pending.subarray(size);
    if (at >= text.length && pending.length === 0) return;
  }
}

function joined(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/**
 * Runs `start(i)` for i in 0..count with at most `CHUNK_WINDOW` running, handing each result to
 * `each` in index order. The first failure stops it; the rest are awaited quietly.
 */
async function inOrder<T>(
  count: number,
  start: (index: number) => Promise<T>,
  each: (value: T, index: number) => void,
): Promise<void> {
  const running: Array<Promise<T>> = [];
  const launch = (index: number) => {
    const promise = start(index);
    // Handled here: one failing after an earlier one stopped the loop is not "unhandled".
    promise.catch(() => undefined);
    running[index] = promise;
  };
  for (let index = 0; index < Math.min(CHUNK_WINDOW, count); index++) launch(index);
  for (let index = 0; index < count; index++) {
    const value = await (running[index] as Promise<T>);
    delete running[index];
    if (index + CHUNK_WINDOW < count) launch(index + CHUNK_WINDOW);
    each(value, index);
  }
}

/**
 * What the bus does with a reply that came after its caller gave up: counts it
 * (`toolbus.bus.replies.late`) and logs the first one. A large reply it names is left to the
 * stream's max age.
 */
export function lateReplyHandler(logger: Logger): LateReply {
  let counter: ReturnType<typeof BUS_METRICS.instrument<"lateReplies">> | undefined;
  let logged = false;
  return (_msg: Msg, subject: string | undefined) => {
    counter ??= BUS_METRICS.instrument("lateReplies");
    counter.add(1);
    if (logged) return;
    logged = true;
    logger.warn(
      { subject },
      `a reply on ${subject ?? "a request"} came after the caller had given up (timed out) and was dropped; later ones are counted in toolbus.bus.replies.late`,
    );
  };
}

/**
 * Replies larger than one NATS message (`max_payload`): the service that answers stores the
 * serialized envelope in a JetStream object store (chunked below max_payload, kept for a TTL)
 * and sends a small reply whose `Toolbus-Reply-Object` header names it; the caller's bus reads
 * the object in its place, then deletes it. A reader that does not know the header still gets a
 * valid `payload_too_large` envelope that says where the reply is.
 */
import type { JetStreamClient } from "@nats-io/jetstream";
import { type ObjectStore, Objm } from "@nats-io/obj";
import { type Msg, nanos, nuid } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { BUS_METRICS } from "./metrics.js";
import type { LateReply } from "./reply-inbox.js";

/** The header of a reply stored in the object store: `<bucket>/<object name>`. */
export const REPLY_OBJECT_HEADER = "Toolbus-Reply-Object";

/** Where an endpoint stores replies too large for one message (`EndpointSpec.largeReplies`). */
export interface LargeReplyOptions {
  /** The object store bucket (`Subjects.objectStores.largeReplies`). */
  bucket: string;
  /** How long a stored reply waits for its caller; the bucket's max age. */
  ttlMs: number;
  /** The bucket's size limit; a reply that would pass it is refused, not stored. */
  maxBytes: number;
}

/** The options of the large-replies bucket, from its name and the `[bus]` table's limits. */
export function largeReplyOptions(
  bucket: string,
  limits: { maxAgeMs: number; maxBytes: number },
): LargeReplyOptions {
  return { bucket, ttlMs: limits.maxAgeMs, maxBytes: limits.maxBytes };
}

/** Room kept below max_payload in each chunk for the chunk's own headers. */
const CHUNK_HEADROOM_BYTES = 4 * 1024;
const MAX_CHUNK_BYTES = 128 * 1024;

export class LargeReplies {
  readonly #stores = new Map<string, Promise<ObjectStore>>();
  readonly #js: () => JetStreamClient;
  readonly #maxPayload: () => number;

  constructor(js: () => JetStreamClient, maxPayload: () => number) {
    this.#js = js;
    this.#maxPayload = maxPayload;
  }

  /** Stores `payload`; resolves with the header value that names it. */
  async store(options: LargeReplyOptions, payload: string): Promise<string> {
    const store = await this.#open(options.bucket, options);
    const name = nuid.next();
    const chunk = Math.max(1024, Math.min(MAX_CHUNK_BYTES, this.#maxPayload() - CHUNK_HEADROOM_BYTES));
    await store.putBlob({ name, options: { max_chunk_size: chunk } }, new TextEncoder().encode(payload));
    return `${options.bucket}/${name}`;
  }

  /** Reads the reply a header names and deletes it; throws an Error saying why it cannot. */
  async take(reference: string): Promise<string> {
    const slash = reference.indexOf("/");
    if (slash <= 0)
      throw new Error(`the ${REPLY_OBJECT_HEADER} header "${reference}" is not <bucket>/<name>`);
    const bucket = reference.slice(0, slash);
    const name = reference.slice(slash + 1);
    const store = await this.#open(bucket);
    const data = await store.getBlob(name);
    if (data === null) {
      throw new Error(
        `object ${name} is not in ${bucket}: it expired before it was read, or was read already`,
      );
    }
    // Read once: the space is given back now rather than at the TTL (the TTL catches a failure).
    await store.delete(name).catch(() => undefined);
    return new TextDecoder().decode(data);
  }

  /** Opens the bucket, creating it when `create` is given (its options apply to a new bucket). */
  #open(bucket: string, create?: LargeReplyOptions): Promise<ObjectStore> {
    let opened = this.#stores.get(bucket);
    if (!opened) {
      const objm = new Objm(this.#js());
      opened = create
        ? objm
            .create(bucket, { ttl: nanos(create.ttlMs), max_bytes: create.maxBytes })
            // Created before with other limits: use it as it is rather than fail the reply.
            .catch(() => objm.open(bucket))
        : objm.open(bucket);
      this.#stores.set(bucket, opened);
      opened.catch(() => this.#stores.delete(bucket));
    }
    return opened;
  }
}

/**
 * What the bus does with a reply that came after its caller gave up: counts it
 * (`toolbus.bus.replies.late`), deletes the large reply it names, if any, and logs the first one.
 */
export function lateReplyHandler(logger: Logger, replies: Pick<LargeReplies, "take">): LateReply {
  let counter: ReturnType<typeof BUS_METRICS.instrument<"lateReplies">> | undefined;
  let logged = false;
  return (msg: Msg, subject: string | undefined) => {
    counter ??= BUS_METRICS.instrument("lateReplies");
    counter.add(1);
    const stored = msg.headers?.get(REPLY_OBJECT_HEADER);
    if (stored) void replies.take(stored).catch(() => undefined);
    if (logged) return;
    logged = true;
    logger.warn(
      { subject },
      `a reply on ${subject ?? "a request"} came after the caller had given up (timed out) and was dropped; later ones are counted in toolbus.bus.replies.late`,
    );
  };
}

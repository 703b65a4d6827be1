/**
 * Publishing JetStream events without making the caller wait for the ack: each publish is
 * tracked until acked, a failed ack is retried a bounded number of times with the same
 * `msgID` (so the stream drops duplicates), a permanent failure is logged, and `flush()`
 * resolves once every pending ack has arrived or been given up on.
 */
import { ClosedConnectionError, type MsgHdrs, nuid } from "@nats-io/transport-node";
import { context } from "@opentelemetry/api";
import type { Logger } from "pino";
import { EVENT_RETRY_POLICY, type RetryPolicy, retryDelayMs } from "./core/backoff.js";
import type { ReplyInbox } from "./reply-inbox.js";
import { injectTraceContext } from "./tracing.js";

export interface PublishEventOptions {
  /** Deduplication id within the stream's duplicate window; default a fresh unique id. */
  msgID?: string;
}

/** Publishes one message to JetStream; resolves once a stream stored it (or had it already). */
export type StoreInStream = (
  subject: string,
  payload: string,
  msgID: string,
  headers: MsgHdrs,
) => Promise<void>;

/** How long JetStream may take to ack one publish (the nats.js default). */
const ACK_TIMEOUT_MS = 5_000;

/**
 * A JetStream publish as nats.js's `js.publish` makes it (the `Nats-Msg-Id` header, the ack on
 * the reply subject), over the bus's own reply inbox.
 */
export function storeInStream(inbox: ReplyInbox): StoreInStream {
  return async (subject, payload, msgID, headers) => {
    headers.set("Nats-Msg-Id", msgID);
    const ack = await inbox.request(subject, payload, { timeoutMs: ACK_TIMEOUT_MS, headers });
    const body = JSON.parse(ack.string()) as {
      stream?: string;
      error?: { description?: string; code?: number };
    };
    if (body.error) {
      throw new Error(`JetStream refused the event: ${body.error.description ?? `code ${body.error.code}`}`);
    }
    if (!body.stream) throw new Error("JetStream answered the event with an invalid ack");
  };
}

export class EventPublisher {
  readonly #pending = new Set<Promise<void>>();
  readonly #store: StoreInStream;
  readonly #logger: Logger;
  readonly #policy: RetryPolicy;

  constructor(store: StoreInStream, logger: Logger, policy: RetryPolicy = EVENT_RETRY_POLICY) {
    this.#store = store;
    this.#logger = logger;
    this.#policy = policy;
  }

  get pendingCount(): number {
    return this.#pending.size;
  }

  publish(subject: string, body: unknown, options: PublishEventOptions = {}): void {
    const msgID = options.msgID ?? nuid.next();
    const payload = JSON.stringify(body);
    // Captured now: the trace the event belongs to is the caller's, not whatever runs at retry time.
    const headers = injectTraceContext(undefined, context.active());
    const tracked = this.#deliver(subject, payload, msgID, headers).finally(() =>
      this.#pending.delete(tracked),
    );
    this.#pending.add(tracked);
  }

  /** Resolves when every event published so far has been acked or given up on. */
  async flush(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  async #deliver(subject: string, payload: string, msgID: string, headers: MsgHdrs): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.#store(subject, payload, msgID, headers);
        return;
      } catch (err) {
        // A closed connection will not come back: retrying only delays the report.
        const delay =
          err instanceof ClosedConnectionError ? undefined : retryDelayMs(this.#policy, attempt + 1);
        if (delay === undefined) {
          this.#logger.error(
            { err, subject, msgID, attempts: attempt + 1 },
            `event on ${subject} was not stored by JetStream after ${attempt + 1} attempts and is lost; check that a stream captures ${subject} and that JetStream is up`,
          );
          return;
        }
        this.#logger.warn(
          { err, subject, msgID, attempt: attempt + 1 },
          `event ack failed; retrying in ${delay} ms`,
        );
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }
}

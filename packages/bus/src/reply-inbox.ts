/**
 * Requests over one reply subscription per connection (`<inbox>.<token>`), as nats.js does, but
 * without its per-request costs: nats.js settles every request by also rejecting it with a new
 * Error, so each successful request pays for a stack trace. A reply that arrives after its
 * request timed out is dropped, and `onLate` is told of it (with the subject, while the inbox
 * still remembers which request it was). A request the NATS server refuses to carry (this
 * identity may not publish its subject) fails at once with a `PermissionViolationError`.
 */
import {
  ClosedConnectionError,
  createInbox,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
  NoRespondersError,
  PermissionViolationError,
  type Subscription,
  TimeoutError,
} from "@nats-io/transport-node";

export interface InboxRequestOptions {
  timeoutMs: number;
  headers?: MsgHdrs;
}

interface Waiting {
  subject: string;
  resolve(msg: Msg): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/** The status NATS answers on the reply subject when nobody subscribes to the request subject. */
const NO_RESPONDERS_STATUS = 503;
/** Timed-out requests whose subject is remembered, to name it when a late reply comes. */
const REMEMBERED_TIMEOUTS = 1_000;

/** A reply that came after its request had timed out. */
export type LateReply = (msg: Msg, subject: string | undefined) => void;

export class ReplyInbox {
  readonly #nc: NatsConnection;
  readonly #inboxPrefix: string | undefined;
  readonly #waiting = new Map<string, Waiting>();
  #prefix = "";
  #subscription: Subscription | undefined;
  #sequence = 0;
  readonly #timedOut = new Map<string, string>();
  readonly #onLate: LateReply | undefined;

  constructor(nc: NatsConnection, inboxPrefix?: string, onLate?: LateReply) {
    this.#nc = nc;
    this.#inboxPrefix = inboxPrefix;
    this.#onLate = onLate;
    void nc.closed().then(() => this.#rejectAll(new ClosedConnectionError()));
    void this.#failRefused();
  }

  /** Publishes are fire-and-forget in NATS: a refusal arrives as a connection status, by subject. */
  async #failRefused(): Promise<void> {
    for await (const status of this.#nc.status()) {
      if (status.type !== "error" || !(status.error instanceof PermissionViolationError)) continue;
      const refused = status.error;
      const mine = refused.operation === "subscription" && refused.subject.startsWith(this.#prefix);
      for (const [token, waiting] of this.#waiting) {
        if (!mine && !(refused.operation === "publish" && refused.subject === waiting.subject)) continue;
        this.#waiting.delete(token);
        clearTimeout(waiting.timer);
        waiting.reject(refused);
      }
    }
  }

  /** The server's max_payload, once the connection knows it. */
  get maxPayload(): number | undefined {
    return this.#nc.info?.max_payload;
  }

  /** Sends `payload` to `subject` and resolves with the first reply; rejects with nats.js's error kinds. */
  request(subject: string, payload: string | Uint8Array, options: InboxRequestOptions): Promise<Msg> {
    const token = (this.#sequence++).toString(36);
    return new Promise<Msg>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(token);
        this.#timedOut.set(token, subject);
        if (this.#timedOut.size > REMEMBERED_TIMEOUTS) {
          this.#timedOut.delete(this.#timedOut.keys().next().value as string);
        }
        reject(new TimeoutError());
      }, options.timeoutMs);
      this.#waiting.set(token, { subject, resolve, reject, timer });
      try {
        this.#subscribe();
        this.#nc.publish(subject, payload, {
          reply: this.#prefix + token,
          ...(options.headers ? { headers: options.headers } : {}),
        });
      } catch (error) {
        clearTimeout(timer);
        this.#waiting.delete(token);
        reject(error);
      }
    });
  }

  /** The reply subscription, made with the first request (and again if it was closed). */
  #subscribe(): void {
    if (this.#subscription && !this.#subscription.isClosed()) return;
    if (this.#nc.isClosed() || this.#nc.isDraining()) throw new ClosedConnectionError();
    this.#prefix = `${createInbox(this.#inboxPrefix)}.`;
    this.#subscription = this.#nc.subscribe(`${this.#prefix}*`, {
      callback: (error, msg) => {
        if (!error) this.#settle(msg);
      },
    });
  }

  #settle(msg: Msg): void {
    const token = msg.subject.slice(this.#prefix.length);
    const waiting = this.#waiting.get(token);
    if (!waiting) {
      const subject = this.#timedOut.get(token);
      this.#timedOut.delete(token);
      // A no-responders status is not an answer; anything else is a reply nobody waits for.
      if (!(msg.data.length === 0 && msg.headers?.code === NO_RESPONDERS_STATUS))
        this.#onLate?.(msg, subject);
      return;
    }
    this.#waiting.delete(token);
    clearTimeout(waiting.timer);
    if (msg.data.length === 0 && msg.headers?.code === NO_RESPONDERS_STATUS) {
      waiting.reject(new NoRespondersError(waiting.subject));
    } else {
      waiting.resolve(msg);
    }
  }

  #rejectAll(error: Error): void {
    for (const waiting of this.#waiting.values()) {
      clearTimeout(waiting.timer);
      waiting.reject(error);
    }
    this.#waiting.clear();
  }
}

/**
 * Publishing JetStream events without making the caller wait for the ack. Every event is held
 * until JetStream acknowledges it. One that is not acknowledged (JetStream down, a node lost,
 * a leader being elected, the connection reconnecting) waits in order and is retried with
 * doubling delays, under the same `Nats-Msg-Id`, so the stream stores it once however many
 * attempts reach it; the retries stop after a time budget (`DEFAULT_EVENT_DELIVERY`). While
 * events wait, one of them probes JetStream and the others stay queued behind it, so an
 * outage costs one request per delay, not one per event; once the probe is stored, the rest
 * goes out in publish order. What is held is bounded in count and bytes. An event given up
 * on (budget spent, bound passed, connection closed) is counted in `toolbus.bus.events.lost`
 * and the first of a run of losses is logged; `toolbus.bus.events.unacked` reports what is held.
 */
import { ClosedConnectionError, type MsgHdrs, nuid } from "@nats-io/transport-node";
import { context } from "@opentelemetry/api";
import type { Logger } from "pino";
import {
  DEFAULT_EVENT_DELIVERY,
  type EventDeliveryLimits,
  overHoldBound,
  retryBudgetSpent,
  retryDelayMs,
} from "./core/backoff.js";
import { BUS_METRICS, observeGauge } from "./metrics.js";
import type { ReplyInbox } from "./reply-inbox.js";
import { injectTraceContext } from "./tracing.js";

export interface PublishEventOptions {
  /** Deduplication id within the stream's duplicate window; default a fresh unique id. */
  msgID?: string;
  /** Told the event's stream sequence once JetStream acknowledged it (the first copy's, for a duplicate). */
  onStored?(sequence: number): void;
}

/**
 * Publishes one message to JetStream; resolves with its stream sequence once a stream stored
 * it (or had it already).
 */
export type StoreInStream = (
  subject: string,
  payload: string,
  msgID: string,
  headers: MsgHdrs,
) => Promise<number>;

/** How long JetStream may take to ack one publish (the nats.js default). */
export const EVENT_ACK_TIMEOUT_MS = 5_000;

/**
 * A JetStream publish as nats.js's `js.publish` makes it (the `Nats-Msg-Id` header, the ack on
 * the reply subject), over the bus's own reply inbox.
 */
export function storeInStream(inbox: ReplyInbox): StoreInStream {
  return async (subject, payload, msgID, headers) => {
    headers.set("Nats-Msg-Id", msgID);
    const ack = await inbox.request(subject, payload, { timeoutMs: EVENT_ACK_TIMEOUT_MS, headers });
    const body = JSON.parse(ack.string()) as {
      stream?: string;
      seq?: number;
      error?: { description?: string; code?: number };
    };
    if (body.error) {
      throw new Error(`JetStream refused the event: ${body.error.description ?? `code ${body.error.code}`}`);
    }
    if (!body.stream || typeof body.seq !== "number") {
      throw new Error("JetStream answered the event with an invalid ack");
    }
    return body.seq;
  };
}

/** Why an event was given up on: the `toolbus.reason` of `toolbus.bus.events.lost`. */
export type EventLossReason = "retry_budget" | "overflow" | "closed";

interface HeldEvent {
  readonly seq: number;
  readonly subject: string;
  readonly payload: string;
  readonly msgID: string;
  readonly headers: MsgHdrs;
  readonly bytes: number;
  readonly firstAtMs: number;
  readonly onStored: ((sequence: number) => void) | undefined;
}

export interface EventPublisherOptions {
  limits?: Partial<EventDeliveryLimits>;
  /** Milliseconds on a monotonic clock; a test may move it. */
  now?: () => number;
}

export class EventPublisher {
  readonly #store: StoreInStream;
  readonly #logger: Logger;
  readonly #limits: EventDeliveryLimits;
  readonly #now: () => number;
  /** Every event not yet acknowledged, in publish order. */
  readonly #held = new Map<number, HeldEvent>();
  /** The held events that failed (or were published while others wait), in publish order. */
  #waiting: HeldEvent[] = [];
  #heldBytes = 0;
  #seq = 0;
  #retrying: Promise<void> | undefined;
  /** Losses since JetStream last stored an event; the first of them is logged. */
  #lostInRun = 0;
  #failingSince: number | undefined;
  readonly #idle = new Set<() => void>();
  #metrics: { lost: ReturnType<typeof BUS_METRICS.instrument<"eventsLost">> } | undefined;

  constructor(store: StoreInStream, logger: Logger, options: EventPublisherOptions = {}) {
    this.#store = store;
    this.#logger = logger;
    this.#limits = { ...DEFAULT_EVENT_DELIVERY, ...options.limits };
    this.#now = options.now ?? (() => performance.now());
  }

  get limits(): Readonly<EventDeliveryLimits> {
    return this.#limits;
  }

  /** Events published and not yet acknowledged or given up on. */
  get pendingCount(): number {
    return this.#held.size;
  }

  publish(subject: string, body: unknown, options: PublishEventOptions = {}): void {
    const metrics = this.#instruments();
    const msgID = options.msgID ?? nuid.next();
    const payload = JSON.stringify(body);
    const bytes = Buffer.byteLength(payload);
    if (overHoldBound(this.#limits, { count: this.#held.size, bytes: this.#heldBytes }, bytes)) {
      this.#lose("overflow", { subject, msgID }, metrics.lost);
      return;
    }
    const event: HeldEvent = {
      seq: this.#seq++,
      subject,
      payload,
      msgID,
      // Captured now: the trace the event belongs to is the caller's, not whatever runs at retry time.
      headers: injectTraceContext(undefined, context.active()),
      bytes,
      firstAtMs: this.#now(),
      onStored: options.onStored,
    };
    this.#held.set(event.seq, event);
    this.#heldBytes += bytes;
    // While others wait, a new event queues behind them: it keeps its place in the order.
    if (this.#retrying) this.#waiting.push(event);
    else this.#send(event);
  }

  /** Resolves when every event published so far has been acknowledged or given up on. */
  flush(): Promise<void> {
    if (this.#held.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.add(resolve));
  }

  #send(event: HeldEvent): void {
    this.#store(event.subject, event.payload, event.msgID, event.headers).then(
      (sequence) => this.#stored(event, sequence),
      (error: unknown) => this.#failed(event, error),
    );
  }

  #stored(event: HeldEvent, sequence: number): void {
    this.#release(event);
    try {
      event.onStored?.(sequence);
    } catch (error) {
      this.#logger.error({ err: error, subject: event.subject }, "an event's onStored callback threw");
    }
    if (this.#failingSince !== undefined || this.#lostInRun > 0) {
      this.#logger.warn(
        { lost: this.#lostInRun, waiting: this.#waiting.length },
        this.#lostInRun > 0
          ? `JetStream stores events again; ${this.#lostInRun} event(s) were lost meanwhile (toolbus.bus.events.lost)`
          : "JetStream stores events again",
      );
      this.#lostInRun = 0;
      this.#failingSince = undefined;
    }
  }

  #failed(event: HeldEvent, error: unknown): void {
    if (!this.#held.has(event.seq)) return;
    if (error instanceof ClosedConnectionError) {
      // A closed connection does not come back: what it held cannot be sent any more.
      this.#release(event);
      this.#lose("closed", event, this.#instruments().lost, error);
      return;
    }
    if (this.#failingSince === undefined) {
      this.#failingSince = this.#now();
      this.#logger.warn(
        { err: error, subject: event.subject, msgID: event.msgID },
        `JetStream did not acknowledge an event on ${event.subject}; holding events and retrying for up to ${duration(this.#limits.retryBudgetMs)} (check that JetStream is up and a stream captures ${event.subject})`,
      );
    }
    insertInOrder(this.#waiting, event);
    this.#startRetrying();
  }

  #startRetrying(): void {
    this.#retrying ??= this.#retry().finally(() => {
      this.#retrying = undefined;
      // Failures that arrived after the loop's last look start it again.
      if (this.#waiting.length > 0) this.#startRetrying();
    });
  }

  /** Probes JetStream with the oldest waiting event until one is stored, then sends the rest. */
  async #retry(): Promise<void> {
    for (let attempt = 1; this.#waiting.length > 0; attempt++) {
      await sleep(retryDelayMs(this.#limits, attempt));
      this.#expire();
      const probe = this.#waiting.shift();
      if (!probe) return;
      let sequence: number;
      try {
        sequence = await this.#store(probe.subject, probe.payload, probe.msgID, probe.headers);
      } catch (error) {
        if (error instanceof ClosedConnectionError) {
          this.#release(probe);
          this.#lose("closed", probe, this.#instruments().lost, error);
          for (const event of this.#waiting.splice(0)) {
            this.#release(event);
            this.#lose("closed", event, this.#instruments().lost);
          }
          return;
        }
        this.#waiting.unshift(probe);
        continue;
      }
      this.#stored(probe, sequence);
      for (const event of this.#waiting.splice(0)) this.#send(event);
      return;
    }
  }

  /** Gives up on the waiting events whose retry budget is spent. */
  #expire(): void {
    const now = this.#now();
    const kept: HeldEvent[] = [];
    for (const event of this.#waiting) {
      if (!retryBudgetSpent(this.#limits, event.firstAtMs, now)) {
        kept.push(event);
        continue;
      }
      this.#release(event);
      this.#lose("retry_budget", event, this.#instruments().lost);
    }
    this.#waiting = kept;
  }

  #release(event: HeldEvent): void {
    if (!this.#held.delete(event.seq)) return;
    this.#heldBytes -= event.bytes;
    if (this.#held.size > 0) return;
    for (const resolve of [...this.#idle]) resolve();
    this.#idle.clear();
  }

  #lose(
    reason: EventLossReason,
    event: { subject: string; msgID: string },
    lost: { add(value: number, attributes: { "toolbus.reason": string }): void },
    error?: unknown,
  ): void {
    lost.add(1, { "toolbus.reason": reason });
    this.#lostInRun++;
    if (this.#lostInRun > 1) return;
    const why = {
      retry_budget: `was not acknowledged by JetStream within ${duration(this.#limits.retryBudgetMs)} of retries`,
      overflow: `was not held: ${this.#held.size} events (${this.#heldBytes} bytes) already wait for JetStream, the most this process holds`,
      closed: "could not be sent: the NATS connection is closed",
    }[reason];
    this.#logger.error(
      { ...(error === undefined ? {} : { err: error }), subject: event.subject, msgID: event.msgID, reason },
      `event on ${event.subject} ${why} and is lost; further losses are counted in toolbus.bus.events.lost and logged when JetStream stores events again`,
    );
  }

  /** Created with the first event, so on the meter provider startTelemetry registered. */
  #instruments() {
    if (!this.#metrics) {
      const unacked = BUS_METRICS.instrument("eventsUnacked");
      observeGauge(unacked, (result) => result.observe(this.#held.size));
      this.#metrics = { lost: BUS_METRICS.instrument("eventsLost") };
    }
    return this.#metrics;
  }
}

/** Puts `event` into `queue` (sorted by publish order) at its place. */
function insertInOrder(queue: HeldEvent[], event: HeldEvent): void {
  let index = queue.length;
  while (index > 0 && queue[index - 1]!.seq > event.seq) index--;
  queue.splice(index, 0, event);
}

/** `300 ms`, `5 min`, `90 s`: a retry budget as a person reads it. */
function duration(ms: number): string {
  if (ms < 10_000) return `${ms} ms`;
  return ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1000)} s`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

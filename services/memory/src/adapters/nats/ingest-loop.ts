/**
 * The ingest loop: a consume on the durable consumer fills a buffer as the server delivers;
 * after each batch the loop takes whatever the buffer holds (up to the batch size), hands it
 * to the batch handler and settles each message as the handler says. So the next batch
 * arrives while the current one is written, a lone message is counted at once, and a busy
 * stream makes large batches. The server hands out at most `maxAckPending` unacknowledged
 * messages, which bounds the buffer; everything held (in hand or buffered) is kept alive.
 * While the database is unreachable the batch in hand is retried with a growing delay and
 * nothing more is taken: the buffer stops growing at that bound, the rest waits in the stream.
 */
import type { Consumer, ConsumerMessages, JetStreamManager, JsMsg } from "@nats-io/jetstream";
import { type Link, ROOT_CONTEXT, SpanKind, trace } from "@opentelemetry/api";
import { type Bus, extractTraceContext, markFailed, tracer } from "@toolbus/bus";
import type { Subjects } from "@toolbus/protocol";
import type { Logger } from "pino";
import { abortableSleep } from "../../abortable-sleep.js";
import { failedMessageAction, holdDelayMs, type RetryPolicy } from "../../core/retry-policy.js";
import type { BatchOutcome, Delivery, Settlement } from "../../handlers/ingest-batch.js";
import { ensureMemoryConsumer, MEMORY_CONSUMER } from "./memory-stream.js";

export const INGEST_SPAN = "toolbus.memory.ingest";

/** How long one pull request of the consume stays open; its idle heartbeat is half of it. */
const PULL_EXPIRES_MS = 5_000;

export interface IngestStats {
  /** Batches handed to the handler (a held batch counts once). */
  batches: number;
  /** Messages handed to the handler, redeliveries included. */
  messages: number;
  /** Messages whose citations were counted. */
  counted: number;
  /** Messages skipped because their messageId was already counted. */
  duplicates: number;
  parked: number;
  /** Messages handed back for a later redelivery. */
  redelivered: number;
  /** Attempts to write a batch that found the database unreachable. */
  unavailable: number;
}

export function emptyIngestStats(): IngestStats {
  return { batches: 0, messages: 0, counted: 0, duplicates: 0, parked: 0, redelivered: 0, unavailable: 0 };
}

export interface IngestLoopDeps {
  bus: Bus;
  subjects: Subjects;
  /** The most messages one batch (one transaction) takes. */
  batchSize: number;
  ackWaitMs: number;
  maxAckPending: number;
  policy: RetryPolicy;
  logger: Logger;
  handle(deliveries: readonly Delivery[]): Promise<BatchOutcome>;
  stats: IngestStats;
}

export class IngestLoop {
  readonly #deps: IngestLoopDeps;
  readonly #stop = new AbortController();
  #running: Promise<void> | undefined;
  /** The running consume; undefined before the first and after one ended. */
  #messages: ConsumerMessages | undefined;
  /** Why the last consume ended, if it ended on its own. */
  #ended: Error | undefined;
  /** Delivered, not yet taken into a batch. */
  #buffer: JsMsg[] = [];
  /** The batch being written. */
  #inHand: readonly JsMsg[] = [];
  #wake: (() => void) | undefined;

  constructor(deps: IngestLoopDeps) {
    this.#deps = deps;
  }

  start(): void {
    this.#running ??= this.#run();
  }

  /**
   * Stops consuming at once, lets the batch in hand finish (a held one is handed back for
   * redelivery), hands back what was buffered, then returns.
   */
  async stop(): Promise<void> {
    this.#stop.abort();
    void this.#messages?.close();
    this.#wakeUp();
    await this.#running;
  }

  get #stopping(): boolean {
    return this.#stop.signal.aborted;
  }

  #wakeUp(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  async #run(): Promise<void> {
    const { subjects, logger, ackWaitMs } = this.#deps;
    const stream = subjects.streams.memory.name;
    logger.info({ stream, consumer: MEMORY_CONSUMER }, `counting citations from stream ${stream}`);
    // Keeps the server from redelivering what is held: a slow or held batch, and the buffer behind it.
    const keepAlive = setInterval(
      () => {
        for (const message of this.#inHand) message.working();
        for (const message of this.#buffer) message.working();
      },
      Math.max(500, Math.floor(ackWaitMs / 3)),
    );
    // Consumes that could not start or ended on their own since messages last arrived.
    let setbacks = 0;
    try {
      while (!this.#stopping) {
        if (this.#messages === undefined && this.#buffer.length === 0) {
          if (this.#ended !== undefined) setbacks += 1;
          if (!(await this.#resume(setbacks))) {
            setbacks += 1;
            continue;
          }
        }
        const batch = await this.#take();
        if (batch.length === 0) continue;
        setbacks = 0;
        try {
          await this.#process(batch);
        } catch (err) {
          // Settling failed (the connection closed under us): the server redelivers what was not acked.
          logger.error(
            { err },
            `settling a batch of ${batch.length} memory messages failed; they will be redelivered`,
          );
        }
      }
    } finally {
      clearInterval(keepAlive);
      await this.#messages?.close();
      this.#handBackBuffer();
    }
  }

  /**
   * Starts a consume, after a growing delay and putting the consumer back when earlier ones
   * failed to start or ended on their own (the consumer deleted, the connection closed); false
   * when it could not start.
   */
  async #resume(setbacks: number): Promise<boolean> {
    const { bus, logger, policy } = this.#deps;
    const ended = this.#ended;
    this.#ended = undefined;
    if (setbacks > 0) {
      const delayMs = holdDelayMs(policy, setbacks);
      if (ended !== undefined) {
        logger.warn(
          { err: ended, delayMs },
          `consuming memory messages stopped (${ended.message}); resuming in ${delayMs} ms`,
        );
      }
      await this.#recreateConsumer(await bus.jsm().catch(() => undefined));
      await abortableSleep(delayMs, this.#stop.signal);
      if (this.#stopping) return false;
    }
    try {
      await this.#consume();
      return true;
    } catch (err) {
      logger.warn({ err }, `consuming memory messages could not start (${describe(err)}); retrying`);
      return false;
    }
  }

  async #consume(): Promise<void> {
    const { bus, subjects, batchSize } = this.#deps;
    const consumer: Consumer = await bus.js().consumers.get(subjects.streams.memory.name, MEMORY_CONSUMER);
    if (this.#stopping) return;
    const messages = await consumer.consume({
      // Pulled ahead in requests of up to a batch; the server's max ack pending bounds the total.
      max_messages: batchSize,
      expires: PULL_EXPIRES_MS,
      // A deleted consumer ends the consume, and the loop puts the consumer back.
      abort_on_missing_resource: true,
      callback: (message) => {
        this.#buffer.push(message);
        this.#wakeUp();
      },
    });
    this.#messages = messages;
    void messages.closed().then((err) => {
      if (this.#messages !== messages) return;
      this.#messages = undefined;
      if (!this.#stopping) this.#ended = err ?? new Error("the consumer's subscription closed");
      this.#wakeUp();
    });
  }

  /** Up to a batch of what is buffered; waits for a first message, the consume to end, or stop. */
  async #take(): Promise<JsMsg[]> {
    while (this.#buffer.length === 0 && this.#messages !== undefined && !this.#stopping) {
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
    if (this.#stopping) return [];
    return this.#buffer.splice(0, this.#deps.batchSize);
  }

  /** On stop: what was delivered but not taken goes back to the server, for any replica at once. */
  #handBackBuffer(): void {
    const buffered = this.#buffer.splice(0);
    for (const message of buffered) message.nak();
    this.#deps.stats.redelivered += buffered.length;
    if (buffered.length > 0) {
      this.#deps.logger.info(`stopping; ${buffered.length} memory messages not yet counted handed back`);
    }
  }

  /** After a failure to consume: the consumer may have been deleted; put it back. */
  async #recreateConsumer(jsm: JetStreamManager | undefined): Promise<void> {
    if (jsm === undefined) return;
    await ensureMemoryConsumer(jsm, this.#deps.subjects, {
      ackWaitMs: this.#deps.ackWaitMs,
      maxAckPending: this.#deps.maxAckPending,
    }).catch(() => undefined);
  }

  async #process(batch: JsMsg[]): Promise<void> {
    const { stats, logger, policy } = this.#deps;
    stats.batches += 1;
    stats.messages += batch.length;
    const deliveries = batch.map(toDelivery);
    this.#inHand = batch;
    try {
      for (let attempt = 1; ; attempt += 1) {
        const outcome = await this.#handle(batch, deliveries);
        if (outcome === "failed") return;
        if (outcome.kind === "settled") {
          settle(batch, outcome.settlements, stats);
          stats.counted += outcome.tally.counted;
          stats.duplicates += outcome.tally.duplicates;
          stats.parked += outcome.tally.parked;
          if (attempt > 1)
            logger.info({ attempts: attempt }, "the memory database is back; counting resumed");
          return;
        }
        stats.unavailable += 1;
        if (this.#stopping) {
          for (const message of batch) message.nak();
          stats.redelivered += batch.length;
          logger.info(`stopping with the memory database unreachable; ${batch.length} messages handed back`);
          return;
        }
        const delayMs = holdDelayMs(policy, attempt);
        const log = attempt === 1 ? logger.warn.bind(logger) : logger.debug.bind(logger);
        log(
          { err: outcome.error, attempt, delayMs, held: batch.length },
          `the memory database is unreachable (${outcome.error.message}); holding ${batch.length} messages and retrying in ${delayMs} ms`,
        );
        await abortableSleep(delayMs, this.#stop.signal);
      }
    } finally {
      this.#inHand = [];
    }
  }

  /** Runs the handler in a span linked to each message's trace; a throw is our bug, reported as "failed". */
  async #handle(batch: JsMsg[], deliveries: Delivery[]): Promise<BatchOutcome | "failed"> {
    const { subjects, logger, policy, stats } = this.#deps;
    const links: Link[] = [];
    for (const message of batch) {
      const context = trace.getSpanContext(extractTraceContext(message.headers, ROOT_CONTEXT));
      if (context !== undefined && trace.isSpanContextValid(context)) links.push({ context });
    }
    const attributes = {
      "messaging.system": "nats",
      "messaging.destination.name": subjects.memoryMessage,
      "messaging.batch.message_count": batch.length,
    };
    return tracer.startActiveSpan(
      INGEST_SPAN,
      { kind: SpanKind.CONSUMER, attributes, links },
      ROOT_CONTEXT,
      async (span) => {
        try {
          return await this.#deps.handle(deliveries);
        } catch (err) {
          markFailed(span, err);
          logger.error({ err }, `counting a batch of ${batch.length} memory messages threw; redelivering it`);
          for (const message of batch) {
            const action = failedMessageAction(policy, message.info.deliveryCount);
            if (action.kind === "redeliver") {
              message.nak(action.delayMs);
              stats.redelivered += 1;
            } else {
              // Not parked (that is what failed): the stream keeps it, the consumer stops offering it.
              logger.error(
                { streamSequence: message.seq },
                `memory message #${message.seq} failed on ${message.info.deliveryCount} deliveries and is no longer offered; it stays in the stream`,
              );
              message.term("failed on every delivery");
            }
          }
          return "failed" as const;
        } finally {
          span.end();
        }
      },
    );
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function toDelivery(message: JsMsg): Delivery {
  return {
    streamSequence: message.seq,
    subject: message.subject,
    deliveryCount: message.info.deliveryCount,
    payload: message.data,
  };
}

function settle(batch: JsMsg[], settlements: Settlement[], stats: IngestStats): void {
  batch.forEach((message, index) => {
    const settlement: Settlement = settlements[index] ?? { kind: "redeliver", delayMs: 0 };
    if (settlement.kind === "ack") {
      message.ack();
    } else {
      message.nak(settlement.delayMs);
      stats.redelivered += 1;
    }
  });
}

/**
 * The ingest loop: fetch a batch from the durable consumer, hand it to the batch handler,
 * settle each message as the handler says. While the database is unreachable the batch in
 * hand is held (its ack deadline kept alive) and retried with a growing delay, and nothing
 * more is fetched: the rest of the messages wait in the stream.
 */
import type { Consumer, JetStreamManager, JsMsg } from "@nats-io/jetstream";
import { type Link, ROOT_CONTEXT, SpanKind, trace } from "@opentelemetry/api";
import { type Bus, extractTraceContext, markFailed, tracer } from "@toolbus/bus";
import type { Subjects } from "@toolbus/protocol";
import type { Logger } from "pino";
import { abortableSleep } from "../../abortable-sleep.js";
import { failedMessageAction, holdDelayMs, type RetryPolicy } from "../../core/retry-policy.js";
import type { BatchOutcome, Delivery, Settlement } from "../../handlers/ingest-batch.js";
import { ensureMemoryConsumer, MEMORY_CONSUMER } from "./memory-stream.js";

export const INGEST_SPAN = "toolbus.memory.ingest";

export interface IngestStats {
  /** Batches fetched (a held batch counts once). */
  batches: number;
  /** Messages fetched, redeliveries included. */
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
  batchSize: number;
  /** How long a fetch waits for its batch to fill (at least 1,000: the client's minimum). */
  batchWaitMs: number;
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

  constructor(deps: IngestLoopDeps) {
    this.#deps = deps;
  }

  start(): void {
    this.#running ??= this.#run();
  }

  /** Lets the batch in hand finish (a held one is handed back for redelivery), then returns. */
  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#running;
  }

  get #stopping(): boolean {
    return this.#stop.signal.aborted;
  }

  async #run(): Promise<void> {
    const { bus, subjects, logger } = this.#deps;
    const stream = subjects.streams.memory.name;
    let consumer: Consumer | undefined;
    let failures = 0;
    logger.info({ stream, consumer: MEMORY_CONSUMER }, `counting citations from stream ${stream}`);
    while (!this.#stopping) {
      let batch: JsMsg[];
      try {
        consumer ??= await bus.js().consumers.get(stream, MEMORY_CONSUMER);
        batch = await this.#fetch(consumer);
        failures = 0;
      } catch (err) {
        failures += 1;
        consumer = undefined;
        const delayMs = holdDelayMs(this.#deps.policy, failures);
        logger.warn({ err, delayMs }, `fetching memory messages failed; trying again in ${delayMs} ms`);
        await this.#recreateConsumer(await bus.jsm().catch(() => undefined));
        await abortableSleep(delayMs, this.#stop.signal);
        continue;
      }
      if (batch.length === 0) continue;
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
  }

  async #fetch(consumer: Consumer): Promise<JsMsg[]> {
    const messages = await consumer.fetch({
      max_messages: this.#deps.batchSize,
      expires: Math.max(1_000, this.#deps.batchWaitMs),
    });
    const batch: JsMsg[] = [];
    try {
      for await (const message of messages) batch.push(message);
    } catch (err) {
      // What arrived before the pull broke is still ours to count.
      if (batch.length === 0) throw err;
      this.#deps.logger.warn({ err, received: batch.length }, "a fetch ended early; counting what arrived");
    }
    return batch;
  }

  /** After a failed fetch: the consumer may have been deleted; put it back. */
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
    // Keeps the server from redelivering a batch that is held or slow.
    const keepAlive = setInterval(
      () => {
        for (const message of batch) message.working();
      },
      Math.max(500, Math.floor(this.#deps.ackWaitMs / 3)),
    );
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
      clearInterval(keepAlive);
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

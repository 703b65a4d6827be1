/**
 * The ingest loop, in two halves that overlap. A reader fetches from the durable consumer into
 * a buffer, each message as it arrives, and keeps one fetch open while the buffer has room for
 * a batch. The writer takes whatever the buffer holds (up to the batch size), hands it to the
 * batch handler and settles each message as the handler says. So the next batch arrives while
 * the current one is written, a lone message is counted at once, and a busy stream makes full
 * batches. At most two batches are held (in hand and buffered), and both are kept alive.
 * While the database is unreachable the batch in hand is retried with a growing delay; the
 * buffer fills and nothing more is fetched: the rest waits in the stream.
 */
import { type Consumer, type ConsumerMessages, JetStreamApiError, type JsMsg } from "@nats-io/jetstream";
import { type Link, ROOT_CONTEXT, SpanKind, trace } from "@opentelemetry/api";
import { type Bus, extractTraceContext, markFailed, tracer } from "@toolbus/bus";
import type { Subjects } from "@toolbus/protocol";
import type { Logger } from "pino";
import { abortableSleep } from "../../abortable-sleep.js";
import { failedMessageAction, holdDelayMs, type RetryPolicy } from "../../core/retry-policy.js";
import {
  type BatchOutcome,
  type Delivery,
  decodePayload,
  type Settlement,
} from "../../handlers/ingest-batch.js";
import type { MemoryRecorder } from "../../metrics.js";
import { memoryConsumer } from "./memory-stream.js";

export const INGEST_SPAN = "toolbus.memory.ingest";

/** JetStream's error code for a consumer that does not exist. */
const CONSUMER_NOT_FOUND = 10014;

/**
 * How long one fetch stays open. Messages are taken as they arrive, so nothing waits for it to
 * end; long, so that its idle heartbeats (half of it) are not missed on a busy event loop.
 */
const FETCH_EXPIRES_MS = 30_000;

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
  /** The most messages one batch (one transaction) takes, and the most buffered ahead of it. */
  batchSize: number;
  /** The consumer's ack wait: what is held is kept alive well within it. */
  ackWaitMs: number;
  policy: RetryPolicy;
  logger: Logger;
  handle(deliveries: readonly Delivery[]): Promise<BatchOutcome>;
  stats: IngestStats;
  /** The `toolbus.memory.*` metrics; none recorded when absent. */
  metrics?: MemoryRecorder;
}

export class IngestLoop {
  readonly #deps: IngestLoopDeps;
  readonly #stop = new AbortController();
  #running: Promise<void> | undefined;
  /** The open fetch, if any. */
  #fetch: ConsumerMessages | undefined;
  /** Fetched (and decoded), not yet taken into a batch; at most a batch. */
  #buffer: Received[] = [];
  /** The batch being written. */
  #inHand: readonly Received[] = [];
  /** Wakes the writer when the buffer gets a message, the reader when it gets room; both on stop. */
  #wakeWriter: (() => void) | undefined;
  #wakeReader: (() => void) | undefined;

  constructor(deps: IngestLoopDeps) {
    this.#deps = deps;
  }

  start(): void {
    this.#running ??= this.#run();
  }

  /**
   * Stops fetching at once, lets the batch in hand finish (a held one is handed back for
   * redelivery), hands back what was buffered, then returns.
   */
  async stop(): Promise<void> {
    this.#stop.abort();
    void this.#fetch?.close();
    if (this.#inHand.length > 0) {
      this.#deps.logger.info(
        `stopping; fetching no more and waiting for the batch in hand (${this.#inHand.length} memory messages) to be written`,
      );
    }
    this.#wake();
    await this.#running;
  }

  get #stopping(): boolean {
    return this.#stop.signal.aborted;
  }

  #wake(): void {
    const writer = this.#wakeWriter;
    const reader = this.#wakeReader;
    this.#wakeWriter = undefined;
    this.#wakeReader = undefined;
    writer?.();
    reader?.();
  }

  async #run(): Promise<void> {
    const { subjects, logger, ackWaitMs } = this.#deps;
    const stream = subjects.streams.memory.name;
    logger.info(
      { stream, consumer: memoryConsumer(subjects).durable },
      `counting citations from stream ${stream}`,
    );
    // Keeps the server from redelivering what is held: a slow or held batch, and the one behind it.
    const keepAlive = setInterval(
      () => {
        for (const { message } of this.#inHand) message.working();
        for (const { message } of this.#buffer) message.working();
      },
      Math.max(500, Math.floor(ackWaitMs / 3)),
    );
    const reading = this.#read();
    try {
      while (!this.#stopping) {
        const taken = await this.#take();
        if (taken.length === 0) continue;
        try {
          await this.#process(taken);
        } catch (err) {
          // Settling failed (the connection closed under us): the server redelivers what was not acked.
          logger.error(
            { err },
            `settling a batch of ${taken.length} memory messages failed; they will be redelivered`,
          );
        }
      }
    } finally {
      clearInterval(keepAlive);
      await reading;
      this.#handBackBuffer();
    }
  }

  /** The reader: one fetch at a time, each for the room the buffer has, until stop. */
  async #read(): Promise<void> {
    const { bus, subjects, batchSize, logger, policy } = this.#deps;
    let consumer: Consumer | undefined;
    let failures = 0;
    while (!this.#stopping) {
      while (this.#buffer.length >= batchSize && !this.#stopping) {
        await new Promise<void>((resolve) => {
          this.#wakeReader = resolve;
        });
      }
      if (this.#stopping) return;
      try {
        const { stream, durable } = memoryConsumer(subjects);
        consumer ??= await bus.js().consumers.get(stream, durable);
        const messages = await consumer.fetch({
          max_messages: batchSize - this.#buffer.length,
          expires: FETCH_EXPIRES_MS,
        });
        this.#fetch = messages;
        if (this.#stopping) void messages.close();
        for await (const message of messages) {
          this.#buffer.push({ message, delivery: toDelivery(message) });
          const writer = this.#wakeWriter;
          this.#wakeWriter = undefined;
          writer?.();
        }
        failures = 0;
      } catch (err) {
        if (this.#stopping) return;
        failures += 1;
        consumer = undefined;
        const delayMs = holdDelayMs(policy, failures);
        const { stream, durable } = memoryConsumer(subjects);
        // The provisioner makes the consumer; this service never does, so it says who can.
        const why =
          err instanceof JetStreamApiError && err.code === CONSUMER_NOT_FOUND
            ? `consumer ${durable} on ${stream} does not exist: run \`toolbus provision\` to make it again`
            : describe(err);
        logger.warn(
          { err, delayMs },
          `fetching memory messages failed (${why}); trying again in ${delayMs} ms`,
        );
        await abortableSleep(delayMs, this.#stop.signal);
      } finally {
        this.#fetch = undefined;
      }
    }
  }

  /** Up to a batch of what is buffered; waits for a first message or stop. */
  async #take(): Promise<Received[]> {
    while (this.#buffer.length === 0 && !this.#stopping) {
      await new Promise<void>((resolve) => {
        this.#wakeWriter = resolve;
      });
    }
    if (this.#stopping) return [];
    const taken = this.#buffer.splice(0, this.#deps.batchSize);
    const reader = this.#wakeReader;
    this.#wakeReader = undefined;
    reader?.();
    return taken;
  }

  /** On stop: what was fetched but not taken goes back to the server, for any replica at once. */
  #handBackBuffer(): void {
    const buffered = this.#buffer.splice(0);
    for (const { message } of buffered) message.nak();
    this.#deps.stats.redelivered += buffered.length;
    if (buffered.length > 0) {
      this.#deps.logger.info(`stopping; ${buffered.length} memory messages not yet counted handed back`);
    }
  }

  async #process(taken: Received[]): Promise<void> {
    const { stats, logger, policy, metrics } = this.#deps;
    stats.batches += 1;
    const batch = taken.map((received) => received.message);
    const deliveries = taken.map((received) => received.delivery);
    stats.messages += batch.length;
    this.#inHand = taken;
    try {
      for (let attempt = 1; ; attempt += 1) {
        const outcome = await this.#handle(batch, deliveries);
        if (outcome === "failed") return;
        if (outcome.kind === "settled") {
          settle(batch, outcome.settlements, stats, metrics);
          metrics?.batch(outcome.tally);
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

interface Received {
  message: JsMsg;
  delivery: Delivery;
}

function toDelivery(message: JsMsg): Delivery {
  return {
    streamSequence: message.seq,
    subject: message.subject,
    deliveryCount: message.info.deliveryCount,
    payload: message.data,
    message: decodePayload(message.data),
  };
}

function settle(
  batch: JsMsg[],
  settlements: Settlement[],
  stats: IngestStats,
  metrics: MemoryRecorder | undefined,
): void {
  const now = Date.now();
  batch.forEach((message, index) => {
    const settlement: Settlement = settlements[index] ?? { kind: "redeliver", delayMs: 0 };
    if (settlement.kind === "ack") {
      message.ack();
      metrics?.acknowledged(message.info.timestampNanos / 1e6, now);
    } else {
      message.nak(settlement.delayMs);
      stats.redelivered += 1;
    }
  });
}

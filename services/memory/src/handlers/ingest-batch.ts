/**
 * One batch of `<prefix>.memory.message` deliveries → one database transaction →
 * how each delivery is settled. Poison is parked in the same transaction. When the database
 * is unreachable the whole batch is reported unavailable (held, retried, nothing settled).
 * When the transaction fails for a reason of its own, the batch is split so that only the
 * failing messages are redelivered, and each is parked once it has used its deliveries.
 */
import type { Logger } from "pino";
import { planBatch } from "../core/batch-plan.js";
import { type DecodedMessage, decodeMemoryMessage } from "../core/memory-message.js";
import { parkedError, storableText } from "../core/parked-message.js";
import { failedMessageAction, type RetryPolicy } from "../core/retry-policy.js";
import { type BatchWrite, type ParkInput, StoreError, type UsageStore } from "../ports.js";

export interface Delivery {
  streamSequence: number;
  subject: string;
  /** 1 on the first delivery. */
  deliveryCount: number;
  payload: Uint8Array;
  /**
   * `payload` decoded (`decodePayload`); the ingest loop decodes a message as it arrives, while
   * the batch before it is written.
   */
  message: DecodedMessage;
}

export type Settlement = { kind: "ack" } | { kind: "redeliver"; delayMs: number };

export interface BatchTally {
  counted: number;
  duplicates: number;
  parked: number;
  /** Citation mentions added to usage counts. */
  citations: number;
}

export type BatchOutcome =
  | { kind: "settled"; settlements: Settlement[]; tally: BatchTally }
  | { kind: "unavailable"; error: StoreError };

export interface IngestPorts {
  store: UsageStore;
  policy: RetryPolicy;
  /** Unix seconds. */
  now(): number;
  logger: Logger;
}

const decoder = new TextDecoder();

export function decodePayload(payload: Uint8Array): DecodedMessage {
  return decodeMemoryMessage(decoder.decode(payload));
}

export async function ingestBatch(
  deliveries: readonly Delivery[],
  ports: IngestPorts,
): Promise<BatchOutcome> {
  const plan = planBatch(deliveries.map((delivery) => delivery.message));
  const poison = plan.poison.map((p) => parkInput(deliveries[p.index]!, p.error, p.messageId));
  for (const item of poison) {
    ports.logger.info(
      { streamSequence: item.streamSequence, messageId: item.messageId },
      `parking memory message #${item.streamSequence}: ${item.error}`,
    );
  }
  const write: BatchWrite = { count: plan.count, park: poison, now: ports.now() };
  try {
    const result = await ports.store.writeBatch(write);
    return settled(
      deliveries.map((): Settlement => ({ kind: "ack" })),
      {
        counted: result.counted,
        duplicates: result.duplicates + plan.repeats.length,
        parked: poison.length,
        citations: result.citations,
      },
    );
  } catch (err) {
    const failure = asStoreError(err);
    if (failure.kind === "transient") return { kind: "unavailable", error: failure };
    ports.logger.warn(
      { err: failure },
      `a batch of ${deliveries.length} memory messages failed (${failure.message}); retrying them one by one`,
    );
    return ingestOneByOne(deliveries, ports);
  }
}

/** The fallback after a permanent batch failure: one transaction per message. */
async function ingestOneByOne(deliveries: readonly Delivery[], ports: IngestPorts): Promise<BatchOutcome> {
  const settlements: Settlement[] = [];
  const tally: BatchTally = { counted: 0, duplicates: 0, parked: 0, citations: 0 };
  const seen = new Set<string>();
  for (const delivery of deliveries) {
    const message = delivery.message;
    let write: BatchWrite;
    if (!message.ok) {
      write = { count: [], park: [parkInput(delivery, message.error, message.messageId)], now: ports.now() };
    } else if (seen.has(message.messageId)) {
      tally.duplicates += 1;
      settlements.push({ kind: "ack" });
      continue;
    } else {
      seen.add(message.messageId);
      write = { count: [message], park: [], now: ports.now() };
    }
    try {
      const result = await ports.store.writeBatch(write);
      tally.counted += result.counted;
      tally.duplicates += result.duplicates;
      tally.citations += result.citations;
      tally.parked += write.park.length;
      settlements.push({ kind: "ack" });
    } catch (err) {
      const failure = asStoreError(err);
      if (failure.kind === "transient") return { kind: "unavailable", error: failure };
      const settlement = await settleFailed(delivery, message.messageId, failure, ports);
      if (settlement === "unavailable") return { kind: "unavailable", error: failure };
      if (settlement.kind === "ack") tally.parked += 1;
      settlements.push(settlement);
    }
  }
  return { kind: "settled", settlements, tally };
}

/** A message that failed on its own: redelivered later, or parked once it used its deliveries. */
async function settleFailed(
  delivery: Delivery,
  messageId: string | null,
  failure: StoreError,
  ports: IngestPorts,
): Promise<Settlement | "unavailable"> {
  const action = failedMessageAction(ports.policy, delivery.deliveryCount);
  const log = ports.logger.child({ streamSequence: delivery.streamSequence, messageId });
  if (action.kind === "redeliver") {
    log.warn(
      { err: failure, deliveryCount: delivery.deliveryCount, delayMs: action.delayMs },
      `memory message #${delivery.streamSequence} failed on delivery ${delivery.deliveryCount} of ${ports.policy.maxDeliveries} (${failure.message}); redelivering in ${action.delayMs} ms`,
    );
    return action;
  }
  const error = `failed on each of ${delivery.deliveryCount} deliveries; last error: ${failure.message}`;
  log.error({ err: failure }, `parking memory message #${delivery.streamSequence}: ${error}`);
  try {
    await ports.store.writeBatch({
      count: [],
      park: [parkInput(delivery, error, messageId)],
      now: ports.now(),
    });
    return { kind: "ack" };
  } catch (err) {
    const parkFailure = asStoreError(err);
    if (parkFailure.kind === "transient") return "unavailable";
    log.error(
      { err: parkFailure },
      `could not park memory message #${delivery.streamSequence}; redelivering it`,
    );
    return { kind: "redeliver", delayMs: ports.policy.redeliveryMaxDelayMs };
  }
}

function parkInput(delivery: Delivery, error: string, messageId: string | null): ParkInput {
  return {
    streamSequence: delivery.streamSequence,
    subject: delivery.subject,
    messageId: messageId === null ? null : storableText(messageId),
    error: parkedError(error),
    deliveries: delivery.deliveryCount,
    payload: delivery.payload,
  };
}

function settled(settlements: Settlement[], tally: BatchTally): BatchOutcome {
  return { kind: "settled", settlements, tally };
}

/** Anything the store throws that is not a StoreError is a fault of ours: permanent. */
function asStoreError(err: unknown): StoreError {
  if (err instanceof StoreError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new StoreError("permanent", message, { cause: err });
}

/**
 * The memory stream and this service's durable pull consumer on it, created or brought in
 * line idempotently, so replicas starting together and restarts are harmless. Publishers
 * may set the JetStream msgID to the messageId: the stream then drops a republish within the
 * duplicate window, and the database's processed ids catch anything later.
 */
import {
  AckPolicy,
  type ConsumerConfig,
  DeliverPolicy,
  JetStreamApiError,
  type JetStreamManager,
  RetentionPolicy,
  StorageType,
} from "@nats-io/jetstream";
import { nanos } from "@nats-io/transport-node";
import { ensureStream, type StreamLimits, streamLimitFields } from "@toolbus/bus";
import type { Subjects } from "@toolbus/protocol";

/** The durable consumer every replica shares (a work queue over the stream). */
export const MEMORY_CONSUMER = "memory";
export const MEMORY_DUPLICATE_WINDOW_MS = 2 * 60 * 1000;

/**
 * `limits` (the `[bus]` table's `memory_max_age_sec` / `memory_max_bytes`): uncounted messages
 * older or beyond them are dropped by the stream, so an outage longer than the age loses them.
 */
export async function ensureMemoryStream(
  jsm: JetStreamManager,
  subjects: Subjects,
  limits: StreamLimits,
  /** The bus's (`TOOLBUS_JS_REPLICAS`), so the stream survives a node's loss on a cluster. */
  replicas = 1,
): Promise<void> {
  await ensureStream(jsm, {
    name: subjects.streams.memory.name,
    subjects: [...subjects.streams.memory.subjects],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    ...streamLimitFields(limits, MEMORY_DUPLICATE_WINDOW_MS),
    num_replicas: replicas,
  });
}

export interface ConsumerSettings {
  ackWaitMs: number;
  /**
   * At least the batch size: the server never hands out more unacknowledged messages than this
   * (all replicas together), which bounds the ingest loop's buffer.
   */
  maxAckPending: number;
}

export async function ensureMemoryConsumer(
  jsm: JetStreamManager,
  subjects: Subjects,
  settings: ConsumerSettings,
): Promise<void> {
  const stream = subjects.streams.memory.name;
  const updatable = {
    ack_wait: nanos(settings.ackWaitMs),
    // Unbounded: the service parks a failing message itself, so the server never drops one.
    max_deliver: -1,
    max_ack_pending: settings.maxAckPending,
  };
  const config: Partial<ConsumerConfig> = {
    durable_name: MEMORY_CONSUMER,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    filter_subject: subjects.memoryMessage,
    ...updatable,
  };
  try {
    await jsm.consumers.add(stream, config);
    return;
  } catch (err) {
    if (!(err instanceof JetStreamApiError)) throw err;
  }
  try {
    await jsm.consumers.update(stream, MEMORY_CONSUMER, updatable);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new Error(
      `consumer ${MEMORY_CONSUMER} on stream ${stream} exists with a config that cannot be changed (${reason}); ` +
        `delete it (nats consumer rm ${stream} ${MEMORY_CONSUMER}) and restart: the stream keeps the messages`,
      { cause: err },
    );
  }
}

/**
 * The memory stream's durable pull consumer, as the provisioner made it: this service reads from
 * it and acknowledges, and never creates, changes or deletes it. Publishers may set the
 * JetStream msgID to the messageId: the stream then drops a republish within its duplicate
 * window, and the database's processed ids catch anything later.
 */
import type { JetStreamManager } from "@nats-io/jetstream";
import { durableConsumers } from "@toolbus/bus";
import type { Subjects } from "@toolbus/protocol";

/** The durable consumer every replica shares (a work queue over the stream). */
export function memoryConsumer(subjects: Subjects): { stream: string; durable: string } {
  const consumer = durableConsumers(subjects).find((c) => c.stream === subjects.streams.memory.name);
  if (consumer === undefined)
    throw new Error("the access tables name no durable consumer of the memory stream");
  return { stream: consumer.stream, durable: consumer.durable };
}

/** How the consumer hands out messages, read from it: its ack wait and how many may be unacknowledged. */
export async function memoryConsumerSettings(
  jsm: JetStreamManager,
  subjects: Subjects,
): Promise<{ ackWaitMs: number; maxAckPending: number }> {
  const { stream, durable } = memoryConsumer(subjects);
  const { config } = await jsm.consumers.info(stream, durable);
  return {
    ackWaitMs: Math.round((config.ack_wait ?? 30_000_000_000) / 1_000_000),
    maxAckPending: config.max_ack_pending ?? -1,
  };
}

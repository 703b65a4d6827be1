// Creating the memory stream and its consumer against a real JetStream: idempotent, and
// brought in line with the settings on a restart.
import { AckPolicy, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection, nanos } from "@nats-io/transport-node";
import { createSubjects } from "@toolbus/protocol";
import { cleanupJetStream, isolation } from "@toolbus/testkit";
import { provided } from "@toolbus/testkit/provided";
import { afterEach, describe, expect, it } from "vitest";
import {
  ensureMemoryConsumer,
  ensureMemoryStream,
  MEMORY_CONSUMER,
} from "../../src/adapters/nats/memory-stream.js";

/** The `[bus]` table's memory_max_age_sec / memory_max_bytes, as the service passes them. */
const LIMITS = { maxAgeMs: 3 * 24 * 60 * 60 * 1000, maxBytes: 64 * 1024 * 1024 };

const open: Array<{ nc: NatsConnection; prefix: string }> = [];

afterEach(async () => {
  for (const { nc, prefix } of open.splice(0)) {
    await cleanupJetStream(provided().natsUrl, prefix);
    await nc.close();
  }
});

async function setUp() {
  const { prefix } = isolation("stream");
  const nc = await connect({ servers: provided().natsUrl });
  open.push({ nc, prefix });
  return { jsm: await jetstreamManager(nc), subjects: createSubjects(prefix) };
}

describe("the memory stream and consumer", () => {
  it("are created once however often start-up runs, capturing only <prefix>.memory.message", async () => {
    const { jsm, subjects } = await setUp();
    const settings = { ackWaitMs: 30_000, maxAckPending: 1_000 };
    await Promise.all([ensureMemoryStream(jsm, subjects, LIMITS), ensureMemoryStream(jsm, subjects, LIMITS)]);
    await ensureMemoryConsumer(jsm, subjects, settings);
    await ensureMemoryConsumer(jsm, subjects, settings);
    const stream = await jsm.streams.info(subjects.streams.memory.name);
    const consumers = await jsm.consumers.list(subjects.streams.memory.name).next();
    expect({
      subjects: stream.config.subjects,
      limits: { maxAge: stream.config.max_age, maxBytes: stream.config.max_bytes },
      consumers: consumers.map((c) => ({
        name: c.name,
        ack: c.config.ack_policy,
        filter: c.config.filter_subject,
        maxDeliver: c.config.max_deliver,
      })),
    }).toEqual({
      subjects: [`${subjects.prefix}.memory.message`],
      limits: { maxAge: nanos(LIMITS.maxAgeMs), maxBytes: LIMITS.maxBytes },
      consumers: [
        { name: MEMORY_CONSUMER, ack: AckPolicy.Explicit, filter: subjects.memoryMessage, maxDeliver: -1 },
      ],
    });
  });

  it("takes a changed ack wait and ack-pending limit on the next start", async () => {
    const { jsm, subjects } = await setUp();
    await ensureMemoryStream(jsm, subjects, LIMITS);
    await ensureMemoryConsumer(jsm, subjects, { ackWaitMs: 30_000, maxAckPending: 1_000 });
    await ensureMemoryConsumer(jsm, subjects, { ackWaitMs: 5_000, maxAckPending: 2_000 });
    const { config } = await jsm.consumers.info(subjects.streams.memory.name, MEMORY_CONSUMER);
    expect({ ackWait: config.ack_wait, maxAckPending: config.max_ack_pending }).toEqual({
      ackWait: nanos(5_000),
      maxAckPending: 2_000,
    });
  });
});

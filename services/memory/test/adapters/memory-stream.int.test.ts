// The memory service's durable consumer is the provisioner's: the service reads how it hands out
// messages from it, and refuses to start without it. Against a real JetStream.
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { AssetsNotProvisioned, connectBus, createLogger } from "@toolbus/bus";
import { createSubjects } from "@toolbus/protocol";
import { cleanupJetStream, isolation, provisionPrefix, withPgSchema } from "@toolbus/testkit";
import { provided } from "@toolbus/testkit/provided";
import { afterEach, describe, expect, it } from "vitest";
import { memoryConsumer, memoryConsumerSettings } from "../../src/adapters/nats/memory-stream.js";
import { loadMemoryConfig } from "../../src/config.js";
import { startMemoryService } from "../../src/memory-service.js";

const open: Array<{ nc: NatsConnection; prefix: string }> = [];
const stopping: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const stop of stopping.splice(0)) await stop();
  for (const { nc, prefix } of open.splice(0)) {
    await cleanupJetStream(provided().natsUrl, prefix);
    await nc.close();
  }
});

async function setUp() {
  const { prefix } = isolation("stream");
  const nc = await connect({ servers: provided().natsUrl });
  open.push({ nc, prefix });
  return { prefix, jsm: await jetstreamManager(nc), subjects: createSubjects(prefix) };
}

describe("the memory consumer", () => {
  it("is the durable the access tables give the memory service, on the memory stream", async () => {
    const { subjects } = await setUp();
    expect(memoryConsumer(subjects)).toEqual({ stream: subjects.streams.memory.name, durable: "memory" });
  });

  it("hands out messages as the provisioner's settings say, read again after it runs with others", async () => {
    const { prefix, jsm, subjects } = await setUp();
    await provisionPrefix(provided().natsUrl, prefix, {
      memoryConsumer: { ackWaitMs: 30_000, maxAckPending: 1_000 },
    });
    expect(await memoryConsumerSettings(jsm, subjects)).toEqual({ ackWaitMs: 30_000, maxAckPending: 1_000 });
    await provisionPrefix(provided().natsUrl, prefix, {
      memoryConsumer: { ackWaitMs: 5_000, maxAckPending: 2_000 },
    });
    expect(await memoryConsumerSettings(jsm, subjects)).toEqual({ ackWaitMs: 5_000, maxAckPending: 2_000 });
  });

  it("missing, keeps the service from starting, naming it and what to run", async () => {
    const { prefix, jsm, subjects } = await setUp();
    await provisionPrefix(provided().natsUrl, prefix);
    await jsm.consumers.delete(subjects.streams.memory.name, "memory");
    const refused = await startOn(prefix).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AssetsNotProvisioned);
    expect((refused as AssetsNotProvisioned).problems).toEqual([
      `consumer memory on ${subjects.streams.memory.name} does not exist`,
    ]);
    expect((refused as Error).message).toContain("Run `toolbus provision`");
    // It made none of its own.
    await expect(jsm.consumers.info(subjects.streams.memory.name, "memory")).rejects.toThrow(
      /consumer not found/,
    );
  });

  it("handing out fewer unacknowledged messages than one batch, makes the service say so at start", async () => {
    const { prefix } = await setUp();
    await provisionPrefix(provided().natsUrl, prefix, {
      memoryConsumer: { ackWaitMs: 30_000, maxAckPending: 5 },
    });
    const { logs } = await startOn(prefix, { MEMORY_BATCH_SIZE: "10" });
    expect(logs.filter((line) => line.level === 40)).toContainEqual(
      expect.objectContaining({
        maxAckPending: 5,
        batchSize: 10,
        msg: "the memory consumer hands out fewer unacknowledged messages than one batch; run toolbus provision with this batch size",
      }),
    );
  });
});

/** Starts the memory service on `prefix` (stopped and closed after the test); throws what its start throws. */
async function startOn(prefix: string, env: Record<string, string> = {}) {
  const logs: Array<{ level: number; msg: string; [field: string]: unknown }> = [];
  const logger = createLogger({
    service: "memory",
    version: "test",
    level: "warn",
    destination: { write: (line: string) => void logs.push(JSON.parse(line)) },
  });
  const bus = await connectBus({
    natsUrl: provided().natsUrl,
    service: { name: "memory", version: "1.0.0" },
    logger,
  });
  const schema = await withPgSchema(provided().databaseUrl, "memory");
  const config = loadMemoryConfig({
    NATS_URL: provided().natsUrl,
    DATABASE_URL: schema.url,
    TOOLBUS_PREFIX: prefix,
    ...env,
  });
  const cleanup = async () => {
    await bus.close();
    await schema.drop();
  };
  try {
    const service = await startMemoryService({ bus, config, logger });
    stopping.push(async () => {
      await service.stop();
      await cleanup();
    });
    return { service, logs };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

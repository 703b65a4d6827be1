// Counting citations from the memory stream (checklist 57–59) end to end: published on the
// bus, counted in Postgres exactly once, in batches, with poison parked.
import { jetstreamManager } from "@nats-io/jetstream";
import { internalSubjects } from "@toolbus/protocol";
import { describe, expect, it, vi } from "vitest";
import { memoryConsumer } from "../src/adapters/nats/memory-stream.js";
import { MemoryParkedResultSchema } from "../src/handlers/parked.js";
import { A, answer, B, C, MISSING } from "./citations.js";
import { type Harness, seedRollouts, startHarness, unixSeconds, usageRows } from "./support.js";

const WAIT = { timeout: 20_000, interval: 100 };

/** Waits until the service has settled `n` messages as counted or duplicate. */
async function settled(h: Harness, counted: number, duplicates = 0): Promise<void> {
  await vi.waitFor(() => {
    const stats = h.service.stats();
    expect({ counted: stats.counted, duplicates: stats.duplicates }).toEqual({ counted, duplicates });
  }, WAIT);
}

describe("counting citations from toolbus.memory.message", () => {
  it("[58] turns a NULL usage_count into 1, adds 1 after that, stamps last_usage in seconds, ignores unknown ids", async () => {
    const h = await startHarness();
    await seedRollouts(h.db, [
      { threadId: A, sourceUpdatedAt: 100 },
      { threadId: B, sourceUpdatedAt: 100, usageCount: 5, lastUsage: 1_000 },
    ]);
    const before = unixSeconds();
    await h.publish({ messageId: "m1", text: answer([A, MISSING]) });
    await settled(h, 1);
    const first = await usageRows(h.db);
    await h.publish({ messageId: "m2", threadId: "t1", text: answer([A, A, B]) });
    await settled(h, 2);
    const second = await usageRows(h.db);
    const after = unixSeconds();
    expect(first[A]?.[0]).toBe(1);
    // m2 names A twice: one message counts each distinct id once (checklist 57).
    expect(second).toEqual({ [A]: [2, second[A]?.[1]], [B]: [6, second[B]?.[1]] });
    for (const stamp of [first[A]?.[1], second[A]?.[1], second[B]?.[1]]) {
      expect(stamp).toBeGreaterThanOrEqual(before);
      expect(stamp).toBeLessThanOrEqual(after);
    }
  });

  it("[57] counts ids from the legacy <thread_ids> block and ignores ids that are not UUIDs", async () => {
    const h = await startHarness();
    await seedRollouts(h.db, [
      { threadId: B, sourceUpdatedAt: 100 },
      { threadId: "not-a-uuid", sourceUpdatedAt: 100 },
    ]);
    await h.publish({
      messageId: "m1",
      text: answer(["not-a-uuid", B.toUpperCase(), "12345"], "thread_ids"),
    });
    await settled(h, 1);
    expect(await usageRows(h.db)).toEqual({ [B]: [1, expect.any(Number)], "not-a-uuid": [null, null] });
  });

  it("writes no usage for a citation without a valid id, yet records the message as counted", async () => {
    const h = await startHarness();
    await seedRollouts(h.db, [{ threadId: A, sourceUpdatedAt: 100 }]);
    await h.publish({ messageId: "m1", text: answer(["nope"]) });
    await h.publish({ messageId: "m2", text: "no citation at all" });
    await settled(h, 2);
    const { rows } = await h.db.query("SELECT message_id FROM memory_processed_messages ORDER BY message_id");
    expect({ usage: await usageRows(h.db), processed: rows }).toEqual({
      usage: { [A]: [null, null] },
      processed: [{ message_id: "m1" }, { message_id: "m2" }],
    });
  });

  it("counts a message once when it is published twice, inside or outside the stream's duplicate window", async () => {
    const h = await startHarness();
    await seedRollouts(h.db, [{ threadId: A, sourceUpdatedAt: 100 }]);
    const message = { messageId: "m1", text: answer([A]) };
    const inWindow = [await h.publish(message, { msgID: "m1" }), await h.publish(message, { msgID: "m1" })];
    expect(inWindow.map((ack) => ack.duplicate)).toEqual([false, true]);
    await settled(h, 1, 0);
    // A different msgID stands for a republish after the duplicate window: the stream keeps it.
    expect((await h.publish(message, { msgID: "m1-later" })).duplicate).toBe(false);
    await settled(h, 1, 1);
    expect(await usageRows(h.db)).toEqual({ [A]: [1, expect.any(Number)] });
  });

  it("counts nothing twice when every message is delivered again", async () => {
    const h = await startHarness();
    await seedRollouts(h.db, [{ threadId: A, sourceUpdatedAt: 100 }]);
    for (const id of ["m1", "m2", "m3"]) await h.publish({ messageId: id, text: answer([A]) });
    await settled(h, 3);
    const counted = await usageRows(h.db);
    // Made anew by the provisioner (the restart runs it first), the consumer starts from the first
    // message: the whole stream is delivered again.
    await h.service.stop();
    const jsm = await jetstreamManager(h.client.nc);
    await jsm.consumers.delete(
      h.service.subjects.streams.memory.name,
      memoryConsumer(h.service.subjects).durable,
    );
    await h.restart();
    await settled(h, 0, 3);
    expect({ before: counted, after: await usageRows(h.db) }).toEqual({
      before: { [A]: [3, expect.any(Number)] },
      after: counted,
    });
  });

  it("counts a burst of 500 messages in a handful of transactions", async () => {
    const h = await startHarness({ env: { MEMORY_BATCH_SIZE: "100" } });
    await seedRollouts(h.db, [
      { threadId: A, sourceUpdatedAt: 100 },
      { threadId: B, sourceUpdatedAt: 100 },
    ]);
    const burst = Array.from({ length: 500 }, (_, i) => ({
      messageId: `m${i}`,
      text: answer(i % 2 ? [A, B] : [A]),
    }));
    await Promise.all(burst.map((message) => h.publish(message)));
    await settled(h, 500);
    const stats = h.service.stats();
    expect(await usageRows(h.db)).toEqual({ [A]: [500, expect.any(Number)], [B]: [250, expect.any(Number)] });
    expect(stats.transactions).toBe(stats.batches);
    expect(stats.transactions).toBeLessThanOrEqual(20);
  });

  it("counts each message once when two replicas share the stream", async () => {
    const h = await startHarness({ env: { MEMORY_BATCH_SIZE: "20" } });
    const replica = await h.startReplica();
    await seedRollouts(h.db, [{ threadId: A, sourceUpdatedAt: 100 }]);
    const messages = Array.from({ length: 300 }, (_, i) => ({ messageId: `m${i}`, text: answer([A]) }));
    await Promise.all(messages.map((message) => h.publish(message)));
    await Promise.all(messages.slice(0, 50).map((message, i) => h.publish(message, { msgID: `again-${i}` })));
    await vi.waitFor(() => {
      const [one, two] = [h.service.stats(), replica.stats()];
      expect({ counted: one.counted + two.counted, duplicates: one.duplicates + two.duplicates }).toEqual({
        counted: 300,
        duplicates: 50,
      });
    }, WAIT);
    expect(await usageRows(h.db)).toEqual({ [A]: [300, expect.any(Number)] });
  });

  it("parks malformed messages at once, lists them, and keeps counting the rest", async () => {
    const h = await startHarness();
    await seedRollouts(h.db, [{ threadId: C, sourceUpdatedAt: 100 }]);
    await h.publish("{not json");
    await h.publish({ text: answer([C]) });
    await h.publish({ messageId: "m-bad", text: 42 });
    await h.publish({ messageId: "m-good", text: answer([C]) });
    await settled(h, 1);
    await vi.waitFor(() => expect(h.service.stats().parked).toBe(3), WAIT);
    const listing = await h.request(
      internalSubjects(h.service.subjects.prefix).memoryParked,
      {},
      MemoryParkedResultSchema,
    );
    const parked = (sequence: number, messageId: string | null, error: string, payload: string) => ({
      stream: h.service.subjects.streams.memory.name,
      streamSequence: sequence,
      subject: h.service.subjects.memoryMessage,
      messageId,
      error,
      deliveries: 1,
      parkedAt: expect.any(Number),
      payloadBytes: Buffer.byteLength(payload),
      payloadPreview: payload,
    });
    expect(listing).toEqual({
      parked: [
        parked(
          3,
          "m-bad",
          "the message is not a MemoryMessage (text: Invalid input: expected string, received number)",
          JSON.stringify({ messageId: "m-bad", text: 42 }),
        ),
        parked(
          2,
          null,
          "the message is not a MemoryMessage (messageId: Invalid input: expected string, received undefined)",
          JSON.stringify({ text: answer([C]) }),
        ),
        parked(1, null, expect.stringMatching(/^the message is not valid JSON \(/), "{not json"),
      ],
    });
    expect(await usageRows(h.db)).toEqual({ [C]: [1, expect.any(Number)] });
  });

  it("redelivers a message Postgres rejects, counts its batch-mates once, and parks it after its last delivery", async () => {
    const h = await startHarness({ env: { MEMORY_MAX_DELIVERIES: "3", MEMORY_REDELIVERY_DELAY_MS: "50" } });
    await seedRollouts(h.db, [{ threadId: A, sourceUpdatedAt: 100 }]);
    await h.publish({ messageId: "good-1", text: answer([A]) });
    // Postgres text cannot hold U+0000: every write of this messageId fails the same way.
    await h.publish({ messageId: "bad\u0000id", text: answer([A]) });
    await h.publish({ messageId: "good-2", text: answer([A]) });
    await vi.waitFor(() => expect(h.service.stats().parked).toBe(1), WAIT);
    const { parked } = await h.request(
      internalSubjects(h.service.subjects.prefix).memoryParked,
      { limit: 10 },
      MemoryParkedResultSchema,
    );
    expect(parked.map(({ messageId, error, deliveries }) => ({ messageId, error, deliveries }))).toEqual([
      {
        messageId: "bad\uFFFDid",
        error:
          'failed on each of 3 deliveries; last error: invalid byte sequence for encoding "UTF8": 0x00 (SQLSTATE 22021)',
        deliveries: 3,
      },
    ]);
    expect({ stats: h.service.stats().counted, usage: await usageRows(h.db) }).toEqual({
      stats: 2,
      usage: { [A]: [2, expect.any(Number)] },
    });
  });
});

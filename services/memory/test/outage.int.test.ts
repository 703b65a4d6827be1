// Failure isolation: Postgres taken away and brought back under a running service (and under
// one starting up). Messages wait in the stream, strip keeps answering, and once Postgres is
// back every message is counted exactly once.
import { jetstreamManager } from "@nats-io/jetstream";
import { MemoryStripResultSchema, MemoryUsageResultSchema, WireError } from "@toolbus/protocol";
import { startThrowawayPostgres, type ThrowawayPostgres } from "@toolbus/testkit";
import { afterEach, describe, expect, it, vi } from "vitest";
import { memoryConsumer } from "../src/adapters/nats/memory-stream.js";
import { A, answer } from "./citations.js";
import { type Harness, seedRollouts, startHarness, usageRows } from "./support.js";

const WAIT = { timeout: 30_000, interval: 100 };
let database: ThrowawayPostgres | undefined;

afterEach(async () => {
  await database?.destroy();
  database = undefined;
});

async function consumerBacklog(h: Harness): Promise<{ unacked: number; pending: number }> {
  const jsm = await jetstreamManager(h.client.nc);
  const info = await jsm.consumers.info(
    h.service.subjects.streams.memory.name,
    memoryConsumer(h.service.subjects).durable,
  );
  return { unacked: info.num_ack_pending, pending: info.num_pending };
}

async function stripStillAnswers(h: Harness): Promise<void> {
  expect(
    await h.request(h.service.subjects.memoryStrip, { text: `ok${answer([A])}` }, MemoryStripResultSchema),
  ).toEqual({
    visibleText: "okHere is the answer.\n",
    citation: { entries: [{ path: "MEMORY.md", lineStart: 1, lineEnd: 2, note: "x" }], rolloutIds: [A] },
  });
}

describe("with Postgres down", () => {
  it("keeps messages in the stream, answers strip, and counts every message once when Postgres is back", async () => {
    database = await startThrowawayPostgres();
    const h = await startHarness({ databaseUrl: database.url });
    try {
      await seedRollouts(h.db, [{ threadId: A, sourceUpdatedAt: 100 }]);
      await h.publish({ messageId: "before", text: answer([A]) });
      await vi.waitFor(() => expect(h.service.stats().counted).toBe(1), WAIT);

      await database.stop();
      for (let i = 0; i < 20; i += 1) await h.publish({ messageId: `during-${i}`, text: answer([A]) });
      await h.publish({ messageId: "during-0", text: answer([A]) }, { msgID: "republished" });
      await vi.waitFor(() => expect(h.service.stats().unavailable).toBeGreaterThan(0), WAIT);

      await stripStillAnswers(h);
      const usage = await h
        .request(h.service.subjects.memoryUsage, {}, MemoryUsageResultSchema)
        .catch((e) => e);
      expect(usage).toBeInstanceOf(WireError);
      expect({ code: (usage as WireError).code, retryable: (usage as WireError).retryable }).toEqual({
        code: "server_unavailable",
        retryable: true,
      });
      const waiting = await consumerBacklog(h);
      expect({ waiting: waiting.unacked + waiting.pending, counted: h.service.stats().counted }).toEqual({
        waiting: 21,
        counted: 1,
      });

      await database.start();
      await vi.waitFor(() => {
        const { counted, duplicates } = h.service.stats();
        expect({ counted, duplicates }).toEqual({ counted: 21, duplicates: 1 });
      }, WAIT);
      await vi.waitFor(
        async () => expect(await consumerBacklog(h)).toEqual({ unacked: 0, pending: 0 }),
        WAIT,
      );
      expect(await usageRows(h.db)).toEqual({ [A]: [21, expect.any(Number)] });
    } finally {
      await h.service.stop();
    }
  });

  it("starts serving strip without Postgres and starts counting once Postgres is reachable", async () => {
    database = await startThrowawayPostgres();
    const h = await startHarness({ databaseUrl: database.url });
    try {
      await seedRollouts(h.db, [{ threadId: A, sourceUpdatedAt: 100 }]);
      await h.service.stop();
      await database.stop();

      await h.restart();
      await stripStillAnswers(h);
      await h.publish({ messageId: "m1", text: answer([A, A]) });
      await h.publish({ messageId: "m2", text: answer([A]) });
      await vi.waitFor(
        async () => expect(await consumerBacklog(h)).toEqual({ unacked: 0, pending: 2 }),
        WAIT,
      );
      expect(h.logs.filter((line) => line.msg.startsWith("the memory database is unreachable"))).toEqual([
        expect.objectContaining({
          level: 40,
          msg: expect.stringMatching(
            /^the memory database is unreachable at start-up \(.+\); strip is served, counting starts once it is back$/,
          ),
        }),
      ]);

      await database.start();
      await h.service.ingesting;
      await vi.waitFor(() => expect(h.service.stats().counted).toBe(2), WAIT);
      expect(await usageRows(h.db)).toEqual({ [A]: [2, expect.any(Number)] });
    } finally {
      await h.service.stop();
    }
  });
});

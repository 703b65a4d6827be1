// How messages flow from the stream into batches: fetched while the previous batch is written
// (one batch ahead, no more), taken as soon as they are there, kept alive while they wait,
// handed back on stop.
// A row lock held by the test makes the service's write wait on cue, in real Postgres.
import { jetstreamManager } from "@nats-io/jetstream";
import type pg from "pg";
import { afterEach, describe, expect, it, vi } from "vitest";
import { memoryConsumer } from "../src/adapters/nats/memory-stream.js";
import { A, answer } from "./citations.js";
import { type Harness, seedRollouts, startHarness, usageRows } from "./support.js";

const WAIT = { timeout: 20_000, interval: 20 };

interface RowLock {
  /** Resolves once a write of the service waits for this lock. */
  blocking(): Promise<void>;
  /** Commits the holding transaction (once; later calls do nothing). */
  release(): Promise<void>;
}

const held: RowLock[] = [];

// Before the harness stops the service, whose write would otherwise wait for a failed test's lock.
afterEach(async () => {
  for (const lock of held.splice(0)) await lock.release();
});

/** Holds `threadId`'s row lock in an open transaction, as a concurrent writer would. */
async function lockRow(db: pg.Pool, threadId: string): Promise<RowLock> {
  const client = await db.connect();
  await client.query("BEGIN");
  await client.query("SELECT 1 FROM stage1_outputs WHERE thread_id = $1 FOR UPDATE", [threadId]);
  const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
  const pid = rows[0]?.pid;
  let released = false;
  const lock: RowLock = {
    blocking: () =>
      vi.waitFor(async () => {
        const waiting = await db.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))",
          [pid],
        );
        expect(waiting.rows[0]?.n).toBe(1);
      }, WAIT),
    async release() {
      if (released) return;
      released = true;
      await client.query("COMMIT");
      client.release();
    },
  };
  held.push(lock);
  return lock;
}

async function consumerState(h: Harness): Promise<{ unacked: number; redelivered: number }> {
  const jsm = await jetstreamManager(h.client.nc);
  const info = await jsm.consumers.info(
    h.service.subjects.streams.memory.name,
    memoryConsumer(h.service.subjects).durable,
  );
  return { unacked: info.num_ack_pending, redelivered: info.num_redelivered };
}

const messages = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => ({ messageId: `m${from + i}`, text: answer([A]) }));

describe("consuming the memory stream", () => {
  it("counts messages that arrive one at a time without waiting for a batch to fill", async () => {
    const h = await startHarness();
    await seedRollouts(h.db, [{ threadId: A, sourceUpdatedAt: 100 }]);
    // A batch that waited to fill (or for a 1 s fetch to expire) would need 5 s for these.
    const deadline = Date.now() + 2_500;
    for (const [index, message] of messages(0, 5).entries()) {
      await h.publish(message);
      await vi.waitFor(() => expect(h.service.stats().counted).toBe(index + 1), {
        timeout: Math.max(1, deadline - Date.now()),
        interval: 5,
      });
    }
    expect(h.service.stats().transactions).toBe(5);
  });

  it("fetches the next messages while a batch is written, and takes them all as the next batch", async () => {
    const h = await startHarness({ env: { MEMORY_BATCH_SIZE: "100" } });
    await seedRollouts(h.db, [{ threadId: A, sourceUpdatedAt: 100 }]);
    const lock = await lockRow(h.db, A);
    await h.publish(messages(0, 1)[0]);
    await lock.blocking();
    await Promise.all(messages(1, 50).map((message) => h.publish(message)));
    // Delivered to the service while its first write still waits.
    await vi.waitFor(async () => expect((await consumerState(h)).unacked).toBe(50), WAIT);
    await lock.release();
    await vi.waitFor(() => expect(h.service.stats().counted).toBe(50), WAIT);
    const { batches, messages: taken, transactions } = h.service.stats();
    expect({ batches, taken, transactions, usage: await usageRows(h.db) }).toEqual({
      batches: 2,
      taken: 50,
      transactions: 2,
      usage: { [A]: [50, expect.any(Number)] },
    });
  });

  it("holds one batch beyond a slow one, no more, and keeps both alive past the ack wait, so none is delivered twice", async () => {
    // An ack wait of 2 s: the keep-alive (every third of it) then has over a second of slack
    // before a redelivery, so a loaded machine that delays its timer does not fail the test.
    const h = await startHarness({ env: { MEMORY_ACK_WAIT_MS: "2000", MEMORY_BATCH_SIZE: "10" } });
    await seedRollouts(h.db, [{ threadId: A, sourceUpdatedAt: 100 }]);
    const lock = await lockRow(h.db, A);
    await h.publish(messages(0, 1)[0]);
    await lock.blocking();
    await Promise.all(messages(1, 30).map((message) => h.publish(message)));
    await vi.waitFor(async () => expect((await consumerState(h)).unacked).toBe(11), WAIT);
    // Three ack waits: without keep-alive the server would have redelivered all eleven by now.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    const whileSlow = await consumerState(h);
    await lock.release();
    await vi.waitFor(() => expect(h.service.stats().counted).toBe(30), WAIT);
    const { counted, duplicates, redelivered, messages: taken } = h.service.stats();
    expect({
      whileSlow,
      service: { counted, duplicates, redelivered, taken },
      after: await consumerState(h),
      usage: await usageRows(h.db),
    }).toEqual({
      whileSlow: { unacked: 11, redelivered: 0 },
      service: { counted: 30, duplicates: 0, redelivered: 0, taken: 30 },
      after: { unacked: 0, redelivered: 0 },
      usage: { [A]: [30, expect.any(Number)] },
    });
  });

  it("hands back the messages it fetched but did not start on when it stops, so another replica counts them at once", async () => {
    const h = await startHarness({ env: { MEMORY_BATCH_SIZE: "100" } });
    await seedRollouts(h.db, [{ threadId: A, sourceUpdatedAt: 100 }]);
    const lock = await lockRow(h.db, A);
    await h.publish(messages(0, 1)[0]);
    await lock.blocking();
    await Promise.all(messages(1, 10).map((message) => h.publish(message)));
    await vi.waitFor(async () => expect((await consumerState(h)).unacked).toBe(10), WAIT);
    const replica = await h.startReplica();
    const stopping = h.service.stop();
    // A shutdown drains the bus first, and the loop keeps counting meanwhile: the batch in hand may
    // finish only once the loop itself is stopping, or it would take the buffered ones next.
    await vi.waitFor(
      () => expect(h.logs.some((line) => line.msg.includes("waiting for the batch in hand"))).toBe(true),
      WAIT,
    );
    await lock.release();
    await stopping;
    // Far sooner than the 30 s ack wait after which the server would redeliver them anyway.
    await vi.waitFor(() => expect(replica.stats().counted).toBe(9), { timeout: 10_000, interval: 20 });
    const first = h.service.stats();
    expect({
      first: { counted: first.counted, redelivered: first.redelivered },
      usage: await usageRows(h.db),
    }).toEqual({ first: { counted: 1, redelivered: 9 }, usage: { [A]: [10, expect.any(Number)] } });
  });

  it("keeps trying, saying why, while its consumer is gone, and counts again once provisioning puts it back", async () => {
    const h = await startHarness();
    await seedRollouts(h.db, [{ threadId: A, sourceUpdatedAt: 100 }]);
    await h.publish(messages(0, 1)[0]);
    await vi.waitFor(() => expect(h.service.stats().counted).toBe(1), WAIT);
    const jsm = await jetstreamManager(h.client.nc);
    const { stream, durable } = memoryConsumer(h.service.subjects);
    await jsm.consumers.delete(stream, durable);
    await h.publish(messages(1, 2)[0]);
    // The service makes no consumer of its own: it says what fails and tries again.
    await vi.waitFor(
      () =>
        expect(
          h.logs.filter((line) => line.msg.startsWith("fetching memory messages failed")),
        ).toContainEqual(
          expect.objectContaining({
            level: 40,
            msg: expect.stringMatching(
              new RegExp(
                `^fetching memory messages failed \\(consumer ${durable} on ${stream} does not exist: ` +
                  "run `toolbus provision` to make it again\\); trying again in \\d+ ms$",
              ),
            ),
          }),
        ),
      WAIT,
    );
    expect(h.service.stats().counted).toBe(1);
    await h.provision();
    // The provisioner's new consumer starts from the first message again: m0 is a duplicate.
    await vi.waitFor(() => {
      const { counted, duplicates } = h.service.stats();
      expect({ counted, duplicates }).toEqual({ counted: 2, duplicates: 1 });
    }, WAIT);
    expect(await usageRows(h.db)).toEqual({ [A]: [2, expect.any(Number)] });
  });
});

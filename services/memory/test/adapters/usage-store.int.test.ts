// The Postgres usage store's batch write against real Postgres: one statement that counts each
// message id once, even with writers racing on the same ids and rows, and fails whole.
import { fileURLToPath } from "node:url";
import { createLogger } from "@toolbus/bus";
import { type PgSchema, withPgSchema } from "@toolbus/testkit";
import { provided } from "@toolbus/testkit/provided";
import fc from "fast-check";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { runMigrations } from "../../src/adapters/pg/migrations.js";
import { PgUsageStore } from "../../src/adapters/pg/usage-store.js";
import type { CountableMessage } from "../../src/core/batch-plan.js";
import { StoreError } from "../../src/ports.js";
import { A, B, C } from "../citations.js";

const MIGRATIONS = fileURLToPath(new URL("../../migrations/", import.meta.url));
const logger = createLogger({ service: "memory", version: "test", level: "silent" });
const open: Array<{ pool: pg.Pool; schema: PgSchema }> = [];

afterEach(async () => {
  for (const { pool, schema } of open.splice(0)) {
    await pool.end();
    await schema.drop();
  }
});

async function migratedPool(): Promise<pg.Pool> {
  const schema = await withPgSchema(provided().databaseUrl, "store");
  const pool = new pg.Pool({ connectionString: schema.url, max: 6 });
  open.push({ pool, schema });
  await runMigrations(pool, MIGRATIONS, logger);
  await pool.query(
    `INSERT INTO stage1_outputs (thread_id, source_updated_at, raw_memory, rollout_summary, generated_at)
     SELECT id, 100, 'raw', 'summary', 100 FROM unnest($1::text[]) AS t(id)`,
    [[A, B, C]],
  );
  return pool;
}

async function totals(pool: pg.Pool): Promise<{ processed: number; usage: Record<string, number> }> {
  const processed = await pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM memory_processed_messages",
  );
  const usage = await pool.query<{ thread_id: string; usage_count: number | null }>(
    "SELECT thread_id, usage_count FROM stage1_outputs ORDER BY thread_id",
  );
  return {
    processed: processed.rows[0]?.n ?? 0,
    usage: Object.fromEntries(usage.rows.map((row) => [row.thread_id, row.usage_count ?? 0])),
  };
}

describe("PgUsageStore.writeBatch", () => {
  it("[58] counts each message id once and loses no mention when writers race on the same ids and rows", async () => {
    const pool = await migratedPool();
    // Every copy of a message cites the same rows, as a redelivery or a republish does.
    const universe: CountableMessage[] = fc
      .sample(fc.array(fc.constantFrom(A, B, C), { maxLength: 4 }), {
        numRuns: 60,
        seed: 6,
      })
      .map((threadIds, i) => ({ messageId: `m${i}`, threadIds }));
    const batch = fc.shuffledSubarray(universe, { minLength: 1, maxLength: 20 });
    // Four writers (replicas), each writing five batches one after another.
    const writers = fc.sample(fc.array(batch, { minLength: 5, maxLength: 5 }), { numRuns: 4, seed: 7 });
    const results = await Promise.all(
      writers.map(async (batches) => {
        const store = new PgUsageStore(pool, "S");
        const results = [];
        for (const count of batches) results.push(await store.writeBatch({ count, park: [], now: 1 }));
        return results;
      }),
    );
    const ids = new Set(writers.flat(2).map((message) => message.messageId));
    const usage: Record<string, number> = { [A]: 0, [B]: 0, [C]: 0 };
    for (const message of universe.filter((m) => ids.has(m.messageId))) {
      for (const threadId of message.threadIds) usage[threadId] = (usage[threadId] ?? 0) + 1;
    }
    const written = results.flat();
    expect({
      totals: await totals(pool),
      counted: written.reduce((sum, result) => sum + result.counted, 0),
      settled: written.reduce((sum, result) => sum + result.counted + result.duplicates, 0),
      citations: written.reduce((sum, result) => sum + result.citations, 0),
    }).toEqual({
      totals: { processed: ids.size, usage },
      counted: ids.size,
      settled: writers.flat(2).length,
      // Each mention counted once, by whichever writer counted its message.
      citations: Object.values(usage).reduce((sum, n) => sum + n, 0),
    });
  });

  it("writes nothing of a batch Postgres rejects in part, and says why", async () => {
    const pool = await migratedPool();
    const store = new PgUsageStore(pool, "S");
    const failure = await store
      .writeBatch({
        count: [
          { messageId: "good", threadIds: [A] },
          { messageId: "bad\u0000id", threadIds: [B] },
        ],
        park: [
          {
            streamSequence: 7,
            subject: "t.memory.message",
            messageId: null,
            error: "not JSON",
            deliveries: 1,
            payload: new TextEncoder().encode("{"),
          },
        ],
        now: 1,
      })
      .catch((err: unknown) => err);
    const parked = await pool.query("SELECT count(*)::int AS n FROM memory_parked_messages");
    expect({
      failure: failure instanceof StoreError ? { kind: failure.kind, message: failure.message } : failure,
      totals: await totals(pool),
      parked: parked.rows[0],
      transactions: store.transactions,
    }).toEqual({
      failure: {
        kind: "permanent",
        message: 'invalid byte sequence for encoding "UTF8": 0x00 (SQLSTATE 22021)',
      },
      totals: { processed: 0, usage: { [A]: 0, [B]: 0, [C]: 0 } },
      parked: { n: 0 },
      transactions: 0,
    });
  });
});

/**
 * The UsageStore on Postgres. A batch is one transaction: the message ids go into
 * `memory_processed_messages` (the ones already there are skipped), the new messages'
 * mentions are added to `stage1_outputs` (reference §9's update, summed per row), and poison
 * is parked. `transactions` counts committed batch writes, so tests can see the batching.
 */
import type { RolloutUsage } from "@toolbus/protocol";
import type pg from "pg";
import { usageIncrements } from "../../core/batch-plan.js";
import { payloadPreview } from "../../core/parked-message.js";
import type { UsageQuery } from "../../core/usage-query.js";
import type {
  BatchWrite,
  BatchWriteResult,
  ParkedMessage,
  ParkInput,
  UsageStore,
} from "../../handlers/ports.js";
import { inTransaction } from "./pool.js";
import { toStoreError } from "./store-error.js";

/** §9's phase-2 ranking; a NULL usage_count ranks as 0, as it does in codex's SQLite. */
const RANKING =
  "COALESCE(usage_count, 0) DESC, COALESCE(last_usage, source_updated_at) DESC, source_updated_at DESC, thread_id DESC";

/** Bytes of a parked payload read back for its preview (a preview is at most 1,000 characters). */
const PREVIEW_BYTES = 4_096;

export class PgUsageStore implements UsageStore {
  readonly #pool: pg.Pool;
  readonly #stream: string;
  #transactions = 0;

  /** `stream` is the JetStream stream parked messages came from. */
  constructor(pool: pg.Pool, stream: string) {
    this.#pool = pool;
    this.#stream = stream;
  }

  /** Committed batch writes so far. */
  get transactions(): number {
    return this.#transactions;
  }

  async writeBatch(write: BatchWrite): Promise<BatchWriteResult> {
    try {
      const result = await inTransaction(this.#pool, async (client) => {
        const counted = await this.#count(client, write);
        for (const item of write.park) await this.#park(client, item, write.now);
        return counted;
      });
      this.#transactions += 1;
      return result;
    } catch (err) {
      throw toStoreError(err);
    }
  }

  async #count(client: pg.PoolClient, write: BatchWrite): Promise<BatchWriteResult> {
    if (write.count.length === 0) return { counted: 0, duplicates: 0 };
    const ids = write.count.map((message) => message.messageId).sort();
    const { rows } = await client.query<{ message_id: string }>(
      `INSERT INTO memory_processed_messages (message_id, processed_at)
       SELECT id, $2 FROM unnest($1::text[]) AS t(id)
       ON CONFLICT (message_id) DO NOTHING
       RETURNING message_id`,
      [ids, write.now],
    );
    const fresh = new Set(rows.map((row) => row.message_id));
    const increments = usageIncrements(write.count.filter((message) => fresh.has(message.messageId)));
    if (increments.length > 0) {
      const threadIds = increments.map((increment) => increment.threadId);
      // Rows are locked in one order by every writer, so two replicas never deadlock.
      await client.query(
        "SELECT 1 FROM stage1_outputs WHERE thread_id = ANY($1::text[]) ORDER BY thread_id FOR UPDATE",
        [threadIds],
      );
      await client.query(
        `UPDATE stage1_outputs AS s
         SET usage_count = COALESCE(s.usage_count, 0) + u.n, last_usage = $3
         FROM unnest($1::text[], $2::int[]) AS u(thread_id, n)
         WHERE s.thread_id = u.thread_id`,
        [threadIds, increments.map((increment) => increment.count), write.now],
      );
    }
    return { counted: fresh.size, duplicates: write.count.length - fresh.size };
  }

  async #park(client: pg.PoolClient, item: ParkInput, now: number): Promise<void> {
    await client.query(
      `INSERT INTO memory_parked_messages
         (stream, stream_sequence, subject, message_id, error, deliveries, payload, parked_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (stream, stream_sequence) DO NOTHING`,
      [
        this.#stream,
        item.streamSequence,
        item.subject,
        item.messageId,
        item.error,
        item.deliveries,
        Buffer.from(item.payload.buffer, item.payload.byteOffset, item.payload.byteLength),
        now,
      ],
    );
  }

  async usage(query: UsageQuery): Promise<RolloutUsage[]> {
    const select = "SELECT thread_id, usage_count, last_usage FROM stage1_outputs";
    try {
      const { rows } =
        query.kind === "top"
          ? await this.#pool.query<UsageRow>(`${select} ORDER BY ${RANKING} LIMIT $1`, [query.limit])
          : await this.#pool.query<UsageRow>(
              `${select} WHERE thread_id = ANY($1::text[]) ORDER BY ${RANKING} LIMIT $2`,
              [query.ids, query.limit ?? null],
            );
      return rows.map((row) => ({
        rolloutId: row.thread_id,
        usageCount: row.usage_count ?? 0,
        lastUsage: row.last_usage === null ? null : Number(row.last_usage),
      }));
    } catch (err) {
      throw toStoreError(err);
    }
  }

  async parked(limit: number): Promise<ParkedMessage[]> {
    try {
      const { rows } = await this.#pool.query<ParkedRow>(
        `SELECT stream, stream_sequence, subject, message_id, error, deliveries, parked_at,
                octet_length(payload) AS payload_bytes, substring(payload FROM 1 FOR $2) AS payload_head
         FROM memory_parked_messages
         WHERE stream = $3
         ORDER BY parked_at DESC, stream_sequence DESC
         LIMIT $1`,
        [limit, PREVIEW_BYTES, this.#stream],
      );
      const decoder = new TextDecoder();
      return rows.map((row) => ({
        stream: row.stream,
        streamSequence: Number(row.stream_sequence),
        subject: row.subject,
        messageId: row.message_id,
        error: row.error,
        deliveries: row.deliveries,
        parkedAt: Number(row.parked_at),
        payloadBytes: row.payload_bytes,
        payloadPreview: payloadPreview(decoder.decode(row.payload_head)),
      }));
    } catch (err) {
      throw toStoreError(err);
    }
  }
}

interface UsageRow {
  thread_id: string;
  usage_count: number | null;
  /** BIGINT: pg returns it as a string. */
  last_usage: string | null;
}

interface ParkedRow {
  stream: string;
  stream_sequence: string;
  subject: string;
  message_id: string | null;
  error: string;
  deliveries: number;
  parked_at: string;
  payload_bytes: number;
  payload_head: Buffer;
}

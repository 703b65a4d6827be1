/**
 * The UsageStore on Postgres. A batch is one statement, so one transaction and one round trip:
 * the message ids go into `memory_processed_messages` (the ones already there are skipped),
 * the new messages' mentions are added to `stage1_outputs` (docs/reference-behavior.md §9's update, summed per
 * row), and poison is parked. `transactions` counts committed batch writes, so tests can see
 * the batching.
 */
import type { RolloutUsage } from "@toolbus/protocol";
import type pg from "pg";
import { mentionsOf } from "../../core/batch-plan.js";
import { payloadPreview } from "../../core/parked-message.js";
import type { UsageQuery } from "../../core/usage-query.js";
import type { BatchWrite, BatchWriteResult, ParkedMessage, UsageStore } from "../../ports.js";
import { toStoreError } from "./store-error.js";

/** §9's phase-2 ranking; a NULL usage_count ranks as 0, as it does in codex's SQLite. */
const RANKING =
  "COALESCE(usage_count, 0) DESC, COALESCE(last_usage, source_updated_at) DESC, source_updated_at DESC, thread_id DESC";

/** Bytes of a parked payload read back for its preview (a preview is at most 1,000 characters). */
const PREVIEW_BYTES = 4_096;

/**
 * One batch write. `fresh` is the ids not counted before; only their mentions are summed.
 * `locked` takes the row locks in thread_id order, and the update touches only rows it has
 * locked, so every writer acquires them in the same order and two replicas never deadlock.
 * The data-modifying CTEs run to completion even though the final SELECT reads only `fresh` and
 * `counted` (whose sum is the mentions added to known rollouts' usage counts).
 */
const WRITE_BATCH = {
  name: "memory-write-batch",
  text: `WITH fresh AS (
    INSERT INTO memory_processed_messages (message_id, processed_at)
    SELECT id, $2 FROM unnest($1::text[]) AS t(id)
    ON CONFLICT (message_id) DO NOTHING
    RETURNING message_id
  ),
  increments AS (
    SELECT m.thread_id, count(*)::int AS n
    FROM unnest($3::text[], $4::text[]) AS m(message_id, thread_id)
    WHERE m.message_id IN (SELECT message_id FROM fresh)
    GROUP BY m.thread_id
  ),
  locked AS MATERIALIZED (
    SELECT thread_id FROM stage1_outputs
    WHERE thread_id IN (SELECT thread_id FROM increments)
    ORDER BY thread_id
    FOR UPDATE
  ),
  counted AS (
    UPDATE stage1_outputs AS s
    SET usage_count = COALESCE(s.usage_count, 0) + i.n, last_usage = $2
    FROM increments AS i
    WHERE s.thread_id = i.thread_id AND s.thread_id IN (SELECT thread_id FROM locked)
    RETURNING i.n
  ),
  parked AS (
    INSERT INTO memory_parked_messages
      (stream, stream_sequence, subject, message_id, error, deliveries, payload, parked_at)
    SELECT $5, p.stream_sequence, p.subject, p.message_id, p.error, p.deliveries, p.payload, $2
    FROM unnest($6::bigint[], $7::text[], $8::text[], $9::text[], $10::int[], $11::bytea[])
      AS p(stream_sequence, subject, message_id, error, deliveries, payload)
    ON CONFLICT (stream, stream_sequence) DO NOTHING
  )
  SELECT (SELECT count(*) FROM fresh)::int AS counted,
         (SELECT COALESCE(sum(n), 0) FROM counted)::int AS citations`,
};

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
    // Sorted, so two writers insert overlapping ids in the same order.
    const ids = write.count.map((message) => message.messageId).sort();
    const mentions = mentionsOf(write.count);
    const park = write.park;
    try {
      const { rows } = await this.#pool.query<{ counted: number; citations: number }>({
        ...WRITE_BATCH,
        values: [
          ids,
          write.now,
          mentions.messageIds,
          mentions.threadIds,
          this.#stream,
          park.map((item) => item.streamSequence),
          park.map((item) => item.subject),
          park.map((item) => item.messageId),
          park.map((item) => item.error),
          park.map((item) => item.deliveries),
          park.map((item) => item.payload),
        ],
      });
      this.#transactions += 1;
      const counted = rows[0]?.counted ?? 0;
      return { counted, duplicates: write.count.length - counted, citations: rows[0]?.citations ?? 0 };
    } catch (err) {
      throw toStoreError(err);
    }
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

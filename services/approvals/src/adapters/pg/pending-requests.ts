/**
 * The `PendingStore` over Postgres: table `approval_requests`, one row per request put to a
 * human, keyed by its request id (so `INSERT … ON CONFLICT DO NOTHING` asks once however many
 * replicas try). Each row also holds what every choice it accepts would decide, so a human's
 * answer is a single conditional update. Resolving `pg_notify`s in the same statement — the
 * request id and the decision, so waiters need not read it back — and the wake-up is sent
 * exactly when, and only if, the answer is committed. Once committed, this replica's own
 * waiters are woken directly: they need no notification to come back (on PGlite none does).
 */

import type {
  ApprovalChoice,
  ApprovalMode,
  ApprovalRequest,
  DecideResult,
  GrantKeys,
  JsonValue,
} from "@toolbus/policy";
import type { ApprovalResolvedEvent } from "@toolbus/protocol";
import type pg from "pg";
import { decisionsByChoice } from "../../core/index.js";
import type { DecisionWaiters } from "../../decision-waiters.js";
import type { ListPage, NewPendingRecord, PendingRecord, PendingStore } from "../../ports.js";

interface Row {
  request: ApprovalRequest;
  mode: ApprovalMode;
  grant_keys: GrantKeys;
  fingerprint: string;
  call_digest: string | null;
  /** Wrapped as `{value}` so that a JSON null is not confused with none. */
  updated_arguments: { value: JsonValue } | null;
  state: "pending" | "resolved";
  decision: DecideResult | null;
  resolved_by: ApprovalResolvedEvent["by"] | null;
}

const COLUMNS =
  "request, mode, grant_keys, fingerprint, call_digest, updated_arguments, state, decision, resolved_by";

/**
 * Answers the rows of CTE `settled` (a resolving UPDATE … RETURNING *) and notifies each on
 * channel `$channel`: `{"requestId","result"}`, or the bare request id when that would not fit
 * in a NOTIFY payload (under 8000 bytes) — the waiter then reads the decision itself.
 */
function notifySettled(channel: string): string {
  return `SELECT ${COLUMNS},
                 pg_notify(${channel}, CASE WHEN octet_length(wake) < 8000 THEN wake ELSE request_id END)
            FROM (SELECT *, json_build_object('requestId', request_id, 'result', decision)::text AS wake
                    FROM settled) AS woken`;
}

export class PgPendingStore implements PendingStore {
  readonly #pool: pg.Pool;
  readonly #channel: string;
  readonly #waiters: Pick<DecisionWaiters, "wake">;

  /**
   * `channel` is the NOTIFY channel the wake-ups go out on to other replicas (see
   * PgDecisionSignals); `waiters` are this replica's.
   */
  constructor(pool: pg.Pool, channel: string, waiters: Pick<DecisionWaiters, "wake">) {
    this.#pool = pool;
    this.#channel = channel;
    this.#waiters = waiters;
  }

  async find(requestId: string): Promise<PendingRecord | undefined> {
    const { rows } = await this.#pool.query<Row>(
      `SELECT ${COLUMNS} FROM approval_requests WHERE request_id = $1`,
      [requestId],
    );
    return rows[0] && recordOf(rows[0]);
  }

  async create(record: NewPendingRecord): Promise<{ created: boolean; record: PendingRecord }> {
    const { request } = record;
    const inserted = await this.#pool.query<Row>(
      `INSERT INTO approval_requests
         (request_id, call_id, request, mode, grant_keys, fingerprint, updated_arguments, state, created_at,
          expires_at, decisions_by_choice, call_digest)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', $8, $9, $10, $11)
       ON CONFLICT (request_id) DO NOTHING
       RETURNING ${COLUMNS}`,
      [
        request.requestId,
        request.callId,
        JSON.stringify(request),
        record.mode,
        JSON.stringify(record.keys),
        record.fingerprint,
        record.updatedArguments === undefined ? null : JSON.stringify({ value: record.updatedArguments }),
        request.createdAt,
        request.expiresAt,
        JSON.stringify(decisionsByChoice(request, record.mode, record.updatedArguments)),
        record.callDigest,
      ],
    );
    if (inserted.rows[0] !== undefined) return { created: true, record: recordOf(inserted.rows[0]) };
    const existing = await this.find(request.requestId);
    if (existing === undefined) {
      throw new Error(`approval request ${request.requestId} conflicted on insert but cannot be read back`);
    }
    return { created: false, record: existing };
  }

  async listPending(now: number, page?: ListPage): Promise<ApprovalRequest[]> {
    const { rows } = await this.#pool.query<{ request: ApprovalRequest }>(
      `SELECT request FROM approval_requests
        WHERE state = 'pending' AND expires_at > $1
          AND ($2::timestamptz IS NULL OR (created_at, request_id) > ($2::timestamptz, $3::text))
          AND ($5::text IS NULL OR call_id = $5)
        ORDER BY created_at, request_id
        LIMIT $4`,
      [
        new Date(now).toISOString(),
        page?.after?.createdAt ?? null,
        page?.after?.requestId ?? null,
        page?.limit ?? null,
        page?.callId ?? null,
      ],
    );
    return rows.map((row) => row.request);
  }

  /** How many requests still wait at `now` (epoch ms): what `listPending` would list. */
  async countPending(now: number): Promise<number> {
    const { rows } = await this.#pool.query<{ pending: number }>(
      `SELECT count(*)::int AS pending FROM approval_requests WHERE state = 'pending' AND expires_at > $1`,
      [new Date(now).toISOString()],
    );
    return rows[0]?.pending ?? 0;
  }

  async settle(requestId: string, result: DecideResult, by: string): Promise<PendingRecord | undefined> {
    const { rows } = await this.#pool.query<Row>(
      `WITH settled AS (
         UPDATE approval_requests
            SET state = 'resolved', decision = $2, resolved_by = $3, resolved_at = now()
          WHERE request_id = $1 AND state = 'pending'
          RETURNING ${COLUMNS}, request_id
       )
       ${notifySettled("$4")}`,
      [requestId, JSON.stringify(result), by, this.#channel],
    );
    return this.#woken(rows[0]);
  }

  async answer(
    requestId: string,
    choice: ApprovalChoice,
    by: string,
    now: number,
  ): Promise<PendingRecord | undefined> {
    const { rows } = await this.#pool.query<Row>(
      `WITH settled AS (
         UPDATE approval_requests
            SET state = 'resolved', resolved_by = $3, resolved_at = now(),
                decision = ((decisions_by_choice -> $2::text)::jsonb || jsonb_build_object('decidedBy', $3::text))::json
          WHERE request_id = $1 AND state = 'pending' AND expires_at > $4
            AND decisions_by_choice -> $2::text IS NOT NULL
          RETURNING ${COLUMNS}, request_id
       )
       ${notifySettled("$5")}`,
      [requestId, choice, by, new Date(now).toISOString(), this.#channel],
    );
    return this.#woken(rows[0]);
  }

  /** The record a resolving statement returned, once this replica's waiters on it are woken. */
  #woken(row: Row | undefined): PendingRecord | undefined {
    if (row === undefined) return undefined;
    const record = recordOf(row);
    this.#waiters.wake(record.request.requestId, record.result);
    return record;
  }

  async overdue(now: number, limit: number): Promise<string[]> {
    const { rows } = await this.#pool.query<{ request_id: string }>(
      `SELECT request_id FROM approval_requests
        WHERE state = 'pending' AND expires_at <= $1
        ORDER BY expires_at LIMIT $2`,
      [new Date(now).toISOString(), limit],
    );
    return rows.map((row) => row.request_id);
  }
}

function recordOf(row: Row): PendingRecord {
  return {
    request: row.request,
    mode: row.mode,
    keys: row.grant_keys,
    fingerprint: row.fingerprint,
    ...(row.call_digest === null ? {} : { callDigest: row.call_digest }),
    ...(row.updated_arguments === null ? {} : { updatedArguments: row.updated_arguments.value }),
    state: row.state,
    ...(row.decision === null ? {} : { result: row.decision }),
    ...(row.resolved_by === null ? {} : { resolvedBy: row.resolved_by }),
  };
}

/**
 * The approvals tables, as plain SQL migrations applied in order at start-up. Each runs once, in
 * its own transaction, under an advisory lock so replicas starting together do not race; the
 * versions applied are recorded in `approvals_migrations`. Append new migrations; never edit one
 * that has shipped. JSON columns are `json`, not `jsonb`: a request is shown to a human and a
 * rewritten input goes to a tool exactly as written, keys in their order.
 */
import type pg from "pg";

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "pending requests and persistent grants",
    sql: `
      CREATE TABLE approval_requests (
        request_id        text PRIMARY KEY,
        call_id           text NOT NULL,
        request           json NOT NULL,
        mode              text NOT NULL,
        grant_keys        jsonb NOT NULL,
        fingerprint       text NOT NULL,
        updated_arguments json,
        state             text NOT NULL CHECK (state IN ('pending', 'resolved')),
        decision          json,
        resolved_by       text,
        created_at        timestamptz NOT NULL,
        expires_at        timestamptz NOT NULL,
        resolved_at       timestamptz,
        CHECK ((state = 'pending') = (decision IS NULL))
      );
      CREATE INDEX approval_requests_pending_by_expiry
        ON approval_requests (expires_at) WHERE state = 'pending';

      CREATE TABLE approval_grants (
        grant_key   text PRIMARY KEY,
        fingerprint text NOT NULL,
        granted_at  timestamptz NOT NULL,
        request_id  text NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: "decisions by choice, so an answer is one conditional write",
    sql: `
      ALTER TABLE approval_requests ADD COLUMN decisions_by_choice json;
    `,
  },
  {
    version: 3,
    name: "each request bound to its call's digest",
    // Null on rows stored before: such a request answers no decide but the one already waiting.
    sql: `
      ALTER TABLE approval_requests ADD COLUMN call_digest text;
    `,
  },
];

// Any constant will do, as long as no other code takes the same advisory lock.
const MIGRATION_LOCK = 0x746f6f6c_61707072n.toString();

/** Applies the migrations not yet applied; answers the versions it applied. */
export async function migrate(
  pool: pg.Pool,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<number[]> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    await client.query(
      "CREATE TABLE IF NOT EXISTS approvals_migrations (version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
    );
    const { rows } = await client.query<{ version: number }>("SELECT version FROM approvals_migrations");
    const done = new Set(rows.map((row) => row.version));
    const applied: number[] = [];
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      if (done.has(migration.version)) continue;
      await client.query(migration.sql);
      await client.query("INSERT INTO approvals_migrations (version, name) VALUES ($1, $2)", [
        migration.version,
        migration.name,
      ]);
      applied.push(migration.version);
    }
    await client.query("COMMIT");
    return applied;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

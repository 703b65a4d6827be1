/**
 * The start-up migration runner: plain SQL files from `migrations/`, each run once, in its
 * own transaction, recorded in `schema_migrations`. An advisory lock (per schema) makes
 * replicas that start together take turns: the second finds the work done.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type pg from "pg";
import type { Logger } from "pino";
import { migrationVersion, planMigrations } from "../../core/migration-files.js";
import { StoreError } from "../../ports.js";
import { toStoreError } from "./store-error.js";

const LOCK_KEY = "hashtext('toolbus.memory.migrations:' || COALESCE(current_schema(), ''))";

/** Applies what is pending; returns the file names applied. Throws StoreError. */
export async function runMigrations(pool: pg.Pool, dir: string, logger: Logger): Promise<string[]> {
  const files = await readdir(dir);
  try {
    const client = await pool.connect();
    try {
      await client.query(`SELECT pg_advisory_lock(${LOCK_KEY})`);
      try {
        return await applyPending(client, dir, files, logger);
      } finally {
        await client.query(`SELECT pg_advisory_unlock(${LOCK_KEY})`).catch(() => undefined);
      }
    } finally {
      client.release();
    }
  } catch (err) {
    throw toStoreError(err);
  }
}

async function applyPending(
  locked: pg.PoolClient,
  dir: string,
  files: string[],
  logger: Logger,
): Promise<string[]> {
  await locked.query(
    "CREATE TABLE IF NOT EXISTS schema_migrations (version TEXT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)",
  );
  const { rows } = await locked.query<{ version: string }>("SELECT version FROM schema_migrations");
  const planned = planMigrations(
    files,
    rows.map((row) => row.version),
  );
  if (!planned.ok) throw new StoreError("permanent", planned.error);
  const { pending, unknownApplied } = planned.plan;
  if (unknownApplied.length > 0) {
    logger.warn(
      { unknownApplied },
      `the database has migrations this service does not know (${unknownApplied.join(", ")}); a newer version applied them`,
    );
  }
  for (const file of pending) {
    const sql = await readFile(join(dir, file), "utf8");
    // The lock holder's own session runs each file, so the lock covers it.
    await inTransactionOn(locked, async () => {
      await locked.query(sql);
      await locked.query(
        "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, extract(epoch FROM now())::bigint)",
        [migrationVersion(file), file],
      );
    });
    logger.info({ migration: file }, `applied migration ${file}`);
  }
  return pending;
}

async function inTransactionOn(client: pg.PoolClient, work: () => Promise<void>): Promise<void> {
  await client.query("BEGIN");
  try {
    await work();
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  }
}

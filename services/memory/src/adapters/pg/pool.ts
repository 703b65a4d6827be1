/**
 * The Postgres pool of the memory service. The schema comes from the connection (a
 * `search_path` in DATABASE_URL's `options`), so tests and tenants can each have their own.
 */
import pg from "pg";
import type { Logger } from "pino";

export function createPool(databaseUrl: string, logger: Logger): pg.Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    application_name: "toolbus-memory",
    max: 4,
    // A database that is down should fail fast: the ingest loop holds its batch and retries.
    connectionTimeoutMillis: 5_000,
    query_timeout: 60_000,
    keepAlive: true,
  });
  // Without a listener, an idle connection dropped by the server would crash the process.
  pool.on("error", (err) => {
    logger.warn({ err }, "an idle Postgres connection failed; the pool opens a new one when needed");
  });
  return pool;
}

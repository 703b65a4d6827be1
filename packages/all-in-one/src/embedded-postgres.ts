/**
 * Postgres for the all-in-one process: DATABASE_URL when given, else an embedded PGlite with
 * its data under the project, served over the Postgres wire protocol on 127.0.0.1 so the
 * services use it through `pg` exactly as they would a real server.
 */
import { mkdirSync } from "node:fs";

import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import { maskUrl } from "@toolbus/bus";
import { freePort } from "@toolbus/config";
import pg from "pg";
import { SetupError } from "./setup-error.js";

/** How long the Postgres at DATABASE_URL may take to accept a connection at start-up. */
const CONNECT_TIMEOUT_MS = 5_000;

export interface Database {
  url: string;
  embedded: boolean;
  stop(): Promise<void>;
}

/** Throws SetupError when DATABASE_URL is given and its Postgres does not answer. */
export async function ensureDatabase(options: { url?: string; dataDir: string }): Promise<Database> {
  if (options.url) {
    await checkReachable(options.url);
    return { url: options.url, embedded: false, stop: async () => {} };
  }
  mkdirSync(options.dataDir, { recursive: true });
  const db = await PGlite.create({ dataDir: options.dataDir });
  const port = await freePort();
  // PGlite is one session underneath: connections are queued, so each service keeps its pool small.
  const server = new PGLiteSocketServer({ db, port, host: "127.0.0.1", maxConnections: 32 });
  await server.start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    embedded: true,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}

/** Connects once before any service starts, so a wrong URL is one clear line, not five services failing. */
async function checkReachable(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  // A connection dropped later must not crash the process through an unhandled 'error' event.
  client.on("error", () => {});
  try {
    await client.connect();
    await client.query("select 1");
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new SetupError(
      `Postgres is not reachable at DATABASE_URL (${maskUrl(url)}): ${reason}. ` +
        "Start it, fix DATABASE_URL, or unset DATABASE_URL to use an embedded PGlite under .toolbus/.",
    );
  } finally {
    await client.end().catch(() => {});
  }
}

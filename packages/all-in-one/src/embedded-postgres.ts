/**
 * Postgres for the all-in-one process: DATABASE_URL when given, else an embedded PGlite with
 * its data under the project, served over the Postgres wire protocol so the services use it
 * through `pg` exactly as they would a real server. PGlite asks no password, so it listens on
 * a Unix socket in the project's private state directory, not on a TCP port: on loopback any
 * local process (a stdio MCP server run as another user included) could log in, and write
 * approval grants.
 */
import { chmodSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";

import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import { ensurePrivateDir, maskUrl } from "@toolbus/bus";
import pg from "pg";
import { SetupError } from "./setup-error.js";

/** How long the Postgres at DATABASE_URL may take to accept a connection at start-up. */
const CONNECT_TIMEOUT_MS = 5_000;

export interface Database {
  url: string;
  embedded: boolean;
  stop(): Promise<void>;
}

/** The name libpq and `pg` give a server's socket in its directory (5432: the port they assume). */
const SOCKET_FILE = ".s.PGSQL.5432";

/** Throws SetupError when DATABASE_URL is given and its Postgres does not answer. */
export async function ensureDatabase(options: {
  url?: string;
  dataDir: string;
  /** A directory of the private state directory, for the embedded server's socket. */
  socketDir: string;
}): Promise<Database> {
  if (options.url) {
    await checkReachable(options.url);
    return { url: options.url, embedded: false, stop: async () => {} };
  }
  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  // The data is the approvals' and memory's (grants, requests): the owner's alone.
  chmodSync(options.dataDir, 0o700);
  ensurePrivateDir(options.socketDir);
  const socket = join(options.socketDir, SOCKET_FILE);
  // A socket left by a run that did not stop cleanly would refuse the listen.
  rmSync(socket, { force: true });
  const db = await PGlite.create({ dataDir: options.dataDir });
  // PGlite is one session underneath: connections are queued, so each service keeps its pool small.
  const server = new PGLiteSocketServer({ db, path: socket, maxConnections: 32 });
  await server.start();
  return {
    url: `postgres://postgres@localhost/postgres?host=${encodeURIComponent(options.socketDir)}`,
    embedded: true,
    async stop() {
      await server.stop();
      await db.close();
      rmSync(socket, { force: true });
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

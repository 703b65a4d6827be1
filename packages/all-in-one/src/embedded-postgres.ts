/**
 * Postgres for the all-in-one process: DATABASE_URL when given, else an embedded PGlite with
 * its data under the project, served over the Postgres wire protocol on 127.0.0.1 so the
 * services use it through `pg` exactly as they would a real server.
 */
import { mkdirSync } from "node:fs";
import { createServer } from "node:net";
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";

export interface Database {
  url: string;
  embedded: boolean;
  stop(): Promise<void>;
}

export async function ensureDatabase(options: { url?: string; dataDir: string }): Promise<Database> {
  if (options.url) return { url: options.url, embedded: false, stop: async () => {} };
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

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

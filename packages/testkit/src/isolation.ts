/**
 * Per-test isolation on shared infrastructure: a unique subject prefix (from which the protocol
 * derives stream and bucket names), a fresh Postgres schema, and cleanup of the JetStream
 * streams and KV buckets a prefix left behind. Lets suites run in parallel on one NATS and PG.
 */
import { randomBytes } from "node:crypto";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import pg from "pg";

/** A short random lower-case token; valid in NATS subjects, stream names, bucket names and SQL identifiers. */
function token(length: number): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  return Array.from(randomBytes(length), (byte) => alphabet[byte % alphabet.length]).join("");
}

/** `name` cut down to what is safe inside a prefix: lower-case letters, digits and `_`, at most 16. */
function label(name: string | undefined): string {
  const cleaned = (name ?? "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, 16)
    .replace(/_+$/, "");
  return cleaned === "" ? "" : `${cleaned}_`;
}

/** A unique subject prefix `t_[<name>_]<10 random>`, a single valid NATS token. */
export function isolation(name?: string): { prefix: string } {
  return { prefix: `t_${label(name)}${token(10)}` };
}

export interface PgSchema {
  /** `databaseUrl` with `options=-c search_path=<schema>`: every connection made from it works in the schema. */
  url: string;
  /** The same as a `pg` Pool/Client config. */
  poolConfig: pg.PoolConfig;
  schema: string;
  /** Drops the schema and everything in it. */
  drop(): Promise<void>;
}

/** Creates a fresh schema `t_[<name>_]<random>` in the database and points connections at it. */
export async function withPgSchema(databaseUrl: string, name?: string): Promise<PgSchema> {
  const schema = `t_${label(name)}${token(10)}`;
  const searchPath = `-c search_path=${schema}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE SCHEMA "${schema}"`);
  const url = new URL(databaseUrl);
  const options = url.searchParams.get("options");
  url.searchParams.set("options", options ? `${options} ${searchPath}` : searchPath);
  return {
    url: url.toString(),
    poolConfig: { connectionString: databaseUrl, options: options ? `${options} ${searchPath}` : searchPath },
    schema,
    drop: () => admin(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`),
  };
}

/**
 * Deletes every JetStream stream, KV bucket (`KV_<name>`) and object store (`OBJ_<name>`)
 * whose name starts with `prefix`, ignoring case. Returns the stream names it deleted.
 */
export async function cleanupJetStream(natsUrl: string, prefix: string): Promise<string[]> {
  const wanted = prefix.toLowerCase();
  const owned = (stream: string) =>
    [stream, stream.replace(/^(KV|OBJ)_/, "")].some((name) => name.toLowerCase().startsWith(wanted));
  const nc = await connect({ servers: natsUrl, timeout: 5_000 });
  try {
    const jsm = await jetstreamManager(nc);
    const doomed: string[] = [];
    for await (const stream of jsm.streams.names()) if (owned(stream)) doomed.push(stream);
    for (const stream of doomed) await jsm.streams.delete(stream);
    return doomed.sort();
  } finally {
    await nc.close();
  }
}

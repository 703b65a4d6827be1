// Isolation helpers against the real Postgres and NATS the global setup provides.
import { jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { connect } from "@nats-io/transport-node";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { cleanupJetStream, isolation, withPgSchema } from "../src/isolation.js";
import { provided } from "../src/provided.js";

async function tablesIn(databaseUrl: string, schema: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name",
      [schema],
    );
    return rows.map((row) => row.table_name);
  } finally {
    await client.end();
  }
}

describe("withPgSchema", () => {
  it("gives each suite its own schema, reached through both the url and the pool config, and drops it", async () => {
    const { databaseUrl } = provided();
    const [a, b] = await Promise.all([withPgSchema(databaseUrl, "alpha"), withPgSchema(databaseUrl, "beta")]);
    try {
      const viaUrl = new pg.Pool({ connectionString: a.url });
      const viaConfig = new pg.Pool(b.poolConfig);
      await viaUrl.query("CREATE TABLE items (id int)");
      await viaConfig.query("CREATE TABLE items (id int)");
      await viaUrl.query("INSERT INTO items VALUES (1), (2)");
      const counts = {
        a: (await viaUrl.query("SELECT count(*)::int AS n FROM items")).rows[0],
        b: (await viaConfig.query("SELECT count(*)::int AS n FROM items")).rows[0],
      };
      await Promise.all([viaUrl.end(), viaConfig.end()]);
      expect(counts).toEqual({ a: { n: 2 }, b: { n: 0 } });
      expect(a.schema).toMatch(/^t_alpha_[a-z0-9]{10}$/);
      expect(await tablesIn(databaseUrl, a.schema)).toEqual(["items"]);
    } finally {
      await Promise.all([a.drop(), b.drop()]);
    }
    expect(await tablesIn(databaseUrl, a.schema)).toEqual([]);
  });
});

describe("cleanupJetStream", () => {
  it("deletes the streams and KV buckets of one prefix, in either case, and leaves other prefixes alone", async () => {
    const { natsUrl } = provided();
    const mine = isolation("cleanup").prefix;
    const theirs = isolation("cleanup").prefix;
    const nc = await connect({ servers: natsUrl });
    try {
      const jsm = await jetstreamManager(nc);
      const stream = (name: string) => jsm.streams.add({ name, subjects: [`${name}.>`] });
      await stream(`${mine.toUpperCase()}_EVENTS`);
      await stream(`${theirs.toUpperCase()}_EVENTS`);
      await new Kvm(nc).create(`${mine}_catalog`);

      expect(await cleanupJetStream(natsUrl, mine)).toEqual([
        `KV_${mine}_catalog`,
        `${mine.toUpperCase()}_EVENTS`,
      ]);
      const left: string[] = [];
      for await (const name of jsm.streams.names()) {
        const lower = name.toLowerCase();
        if (lower.includes(mine) || lower.includes(theirs)) left.push(lower);
      }
      expect(left).toEqual([`${theirs}_events`]);
    } finally {
      await cleanupJetStream(natsUrl, theirs);
      await nc.close();
    }
  });
});

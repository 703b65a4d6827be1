// The start-up migration runner against real Postgres: once per file, safe for replicas
// starting together, all or nothing per file.
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createLogger } from "@toolbus/bus";
import { type PgSchema, withPgSchema } from "@toolbus/testkit";
import { provided } from "@toolbus/testkit/provided";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { runMigrations } from "../../src/adapters/pg/migrations.js";
import { StoreError } from "../../src/ports.js";

const MIGRATIONS = fileURLToPath(new URL("../../migrations/", import.meta.url));
const logger = createLogger({ service: "memory", version: "test", level: "silent" });
const open: Array<{ pool: pg.Pool; schema: PgSchema }> = [];

afterEach(async () => {
  for (const { pool, schema } of open.splice(0)) {
    await pool.end();
    await schema.drop();
  }
});

async function freshSchema(): Promise<{ pool: pg.Pool; schema: PgSchema }> {
  const schema = await withPgSchema(provided().databaseUrl, "migrate");
  const pool = new pg.Pool({ connectionString: schema.url, max: 4 });
  open.push({ pool, schema });
  return { pool, schema };
}

async function tables(pool: pg.Pool, schema: string): Promise<string[]> {
  const { rows } = await pool.query<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name",
    [schema],
  );
  return rows.map((row) => row.table_name);
}

describe("runMigrations", () => {
  it("creates the memory tables in the connection's schema, and a second run applies nothing", async () => {
    const { pool, schema } = await freshSchema();
    expect(await runMigrations(pool, MIGRATIONS, logger)).toEqual(readdirSync(MIGRATIONS).sort());
    expect(await runMigrations(pool, MIGRATIONS, logger)).toEqual([]);
    expect(await tables(pool, schema.schema)).toEqual([
      "jobs",
      "memory_parked_messages",
      "memory_processed_messages",
      "schema_migrations",
      "stage1_outputs",
    ]);
  });

  it("applies each file once when two replicas start together", async () => {
    const { schema } = await freshSchema();
    const replicas = [1, 2].map(() => new pg.Pool({ connectionString: schema.url, max: 2 }));
    try {
      const results = await Promise.all(replicas.map((pool) => runMigrations(pool, MIGRATIONS, logger)));
      expect(results.map((applied) => applied.length).sort()).toEqual([0, readdirSync(MIGRATIONS).length]);
      const { rows } = await replicas[0]!.query(
        "SELECT version, name FROM schema_migrations ORDER BY version",
      );
      expect(rows).toEqual([{ version: "0001", name: "0001_memory.sql" }]);
    } finally {
      await Promise.all(replicas.map((pool) => pool.end()));
    }
  });

  it("rolls back a failing file completely and reports it as permanent", async () => {
    const { pool, schema } = await freshSchema();
    const dir = mkdtempSync(join(tmpdir(), "memory-migrations-"));
    writeFileSync(join(dir, "0001_first.sql"), "CREATE TABLE first_table (id int);");
    writeFileSync(
      join(dir, "0002_broken.sql"),
      "CREATE TABLE half_made (id int);\nSELECT * FROM no_such_table;",
    );
    const failure = await runMigrations(pool, dir, logger).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(StoreError);
    expect({ kind: (failure as StoreError).kind, message: (failure as StoreError).message }).toEqual({
      kind: "permanent",
      message: 'relation "no_such_table" does not exist (SQLSTATE 42P01)',
    });
    const { rows } = await pool.query("SELECT version FROM schema_migrations");
    expect({ tables: await tables(pool, schema.schema), applied: rows }).toEqual({
      tables: ["first_table", "schema_migrations"],
      applied: [{ version: "0001" }],
    });
  });
});

// Shared set-up of the memory integration tests: the service started in-process on an
// isolated prefix and Postgres schema, a separate client connection that publishes and
// requests as other services would, seeded rollout rows, and cleanup after each test. Before
// each start the prefix is provisioned from the same settings, as `pnpm start` runs
// `toolbus provision` before its services.
import { type JetStreamClient, jetstream, type PubAck } from "@nats-io/jetstream";
import { type Bus, connectBus, createLogger } from "@toolbus/bus";
import { DEFAULT_BUS_CONFIG, DEFAULT_MEMORY_CONFIG, provisionInputs } from "@toolbus/config";
import { cleanupJetStream, isolation, provisionPrefix, withPgSchema } from "@toolbus/testkit";
import { provided } from "@toolbus/testkit/provided";
import pg from "pg";
import { afterAll, afterEach } from "vitest";
import type { z } from "zod";
import { loadMemoryConfig, type MemoryConfig } from "../src/config.js";
import { type MemoryService, startMemoryService } from "../src/memory-service.js";

export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

export interface Harness {
  config: MemoryConfig;
  /** The running service; `restart()` replaces it. */
  service: MemoryService;
  /** What the service logged (debug and up). */
  logs: LogLine[];
  /** A pool on the service's schema, for seeding and reading rows. */
  db: pg.Pool;
  /** A client of the bus, as another service would be. */
  client: Bus;
  js: JetStreamClient;
  /** Publishes a memory message (an object is sent as JSON, a string as it is). */
  publish(body: unknown, options?: { msgID?: string }): Promise<PubAck>;
  request<S extends z.ZodType>(subject: string, body: unknown, schema: S): Promise<z.output<S>>;
  /** Stops the service and starts a new one on the same prefix and schema (provisioned again first). */
  restart(env?: Record<string, string>): Promise<void>;
  /** Runs the provisioner on the prefix again, with the settings of `env` (MEMORY_*). */
  provision(env?: Record<string, string>): Promise<void>;
  /** Starts another replica on the same prefix and schema (stopped after the test). */
  startReplica(): Promise<MemoryService>;
}

type Cleanup = () => Promise<unknown>;
const perTest: Cleanup[] = [];
const perFile: Cleanup[] = [];

async function runAll(cleanups: Cleanup[]): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
}

afterEach(() => runAll(perTest));
afterAll(() => runAll(perFile));

export interface HarnessOptions {
  /** `file`: one service for every test of the file (stateless endpoints); default `test`. */
  scope?: "test" | "file";
  /** Extra environment for the service (MEMORY_* settings). */
  env?: Record<string, string>;
  /** Default: a fresh schema in the shared test database. */
  databaseUrl?: string;
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const { natsUrl, databaseUrl: sharedDatabase } = provided();
  const { prefix } = isolation("memory");
  const cleanups = options.scope === "file" ? perFile : perTest;
  let databaseUrl = options.databaseUrl;
  if (databaseUrl === undefined) {
    const schema = await withPgSchema(sharedDatabase, "memory");
    cleanups.push(() => schema.drop());
    databaseUrl = schema.url;
  }
  cleanups.push(() => cleanupJetStream(natsUrl, prefix));
  const baseEnv = { NATS_URL: natsUrl, DATABASE_URL: databaseUrl, TOOLBUS_PREFIX: prefix, ...options.env };
  const logs: LogLine[] = [];
  const logger = createLogger({
    service: "memory",
    version: "test",
    level: "debug",
    destination: { write: (line: string) => void logs.push(JSON.parse(line) as LogLine) },
  });
  // The consumer's ack wait and ack-pending limit come from the same MEMORY_* settings the service reads.
  const provision = (env: Record<string, string>) =>
    provisionPrefix(
      natsUrl,
      prefix,
      provisionInputs({ bus: DEFAULT_BUS_CONFIG, memory: DEFAULT_MEMORY_CONFIG }, { ...baseEnv, ...env }),
    );
  // A replica on a bus of its own; stopping it drains it, stops it and closes the bus, as a process's shutdown does.
  const start = async (env: Record<string, string>) => {
    await provision(env);
    const config = loadMemoryConfig({ ...baseEnv, ...env });
    const bus = await connectBus({ natsUrl, service: { name: "memory", version: "1.0.0" }, logger });
    const started = await startMemoryService({ bus, config, logger }).catch(async (error: unknown) => {
      await bus.close();
      throw error;
    });
    let stopped: Promise<void> | undefined;
    const service: MemoryService = {
      ...started,
      stop: () => {
        stopped ??= (async () => {
          await started.drain();
          await started.stop();
          await bus.close();
        })();
        return stopped;
      },
    };
    cleanups.push(() => service.stop());
    return { config, service };
  };
  const first = await start({});
  const db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  db.on("error", () => undefined);
  cleanups.push(() => db.end());
  const client = await connectBus({
    natsUrl,
    service: { name: "memory-test-client", version: "1.0.0" },
    logger: createLogger({ service: "memory-test-client", version: "1.0.0", level: "silent" }),
  });
  cleanups.push(() => client.close());
  const js = jetstream(client.nc);
  const harness: Harness = {
    ...first,
    logs,
    db,
    client,
    js,
    publish: (body, publishOptions = {}) =>
      js.publish(
        harness.service.subjects.memoryMessage,
        typeof body === "string" ? body : JSON.stringify(body),
        publishOptions.msgID === undefined ? {} : { msgID: publishOptions.msgID },
      ),
    request: (subject, body, schema) => client.request(subject, body, schema),
    async restart(env = {}) {
      await harness.service.stop();
      Object.assign(harness, await start(env));
    },
    async startReplica() {
      return (await start({})).service;
    },
    provision: (env = {}) => provision(env),
  };
  return harness;
}

export interface RolloutRow {
  threadId: string;
  sourceUpdatedAt: number;
  usageCount?: number | null;
  lastUsage?: number | null;
}

/** Inserts stage1_outputs rows the way codex's phase 1 would have written them. */
export async function seedRollouts(db: pg.Pool, rows: readonly RolloutRow[]): Promise<void> {
  for (const row of rows) {
    await db.query(
      `INSERT INTO stage1_outputs
         (thread_id, source_updated_at, raw_memory, rollout_summary, generated_at, usage_count, last_usage)
       VALUES ($1, $2, 'raw', 'summary', $2, $3, $4)`,
      [row.threadId, row.sourceUpdatedAt, row.usageCount ?? null, row.lastUsage ?? null],
    );
  }
}

/** `{threadId: [usage_count, last_usage]}` for every row. */
export async function usageRows(db: pg.Pool): Promise<Record<string, [number | null, number | null]>> {
  const { rows } = await db.query<{
    thread_id: string;
    usage_count: number | null;
    last_usage: string | null;
  }>("SELECT thread_id, usage_count, last_usage FROM stage1_outputs ORDER BY thread_id");
  return Object.fromEntries(
    rows.map((row) => [
      row.thread_id,
      [row.usage_count, row.last_usage === null ? null : Number(row.last_usage)],
    ]),
  );
}

export function unixSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/**
 * The memory service assembled from its parts on the bus it is given: Postgres (migrated at
 * start-up), the bus endpoints (strip, usage, parked) and the ingest loop on the memory stream.
 * `main.ts` and in-process tests both start it here. Strip never touches the database, so it answers
 * while Postgres is down; ingest then waits, and starts once the schema is migrated.
 */
import { fileURLToPath } from "node:url";
import { type Bus, createLogger, type Logger, type RunningService, verifyAssets } from "@toolbus/bus";
import {
  createSubjects,
  identityOf,
  internalSubjects,
  MemoryStripRequestSchema,
  MemoryUsageRequestSchema,
  type Subjects,
  TOOLBUS_VERSION,
} from "@toolbus/protocol";
import type pg from "pg";
import { abortableSleep } from "./abortable-sleep.js";
import { emptyIngestStats, IngestLoop, type IngestStats } from "./adapters/nats/ingest-loop.js";
import { memoryConsumerSettings } from "./adapters/nats/memory-stream.js";
import { runMigrations } from "./adapters/pg/migrations.js";
import { createPool } from "./adapters/pg/pool.js";
import { PgUsageStore } from "./adapters/pg/usage-store.js";
import type { MemoryConfig } from "./config.js";
import { DEFAULT_RETRY_POLICY, holdDelayMs, type RetryPolicy } from "./core/retry-policy.js";
import { ingestBatch } from "./handlers/ingest-batch.js";
import { MemoryParkedRequestSchema, parked } from "./handlers/parked.js";
import { strip } from "./handlers/strip.js";
import { usage } from "./handlers/usage.js";
import { memoryRecorder } from "./metrics.js";
import { StoreError, type UsageStore } from "./ports.js";

export const SERVICE_NAME = "memory";

const DEFAULT_MIGRATIONS_DIR = fileURLToPath(new URL("../migrations/", import.meta.url));

export interface MemoryServiceDeps {
  /** Connected with the memory identity (`connectServiceBus`, role `memory`); not closed here. */
  bus: Bus;
  config: MemoryConfig;
  /** Default: a logger at `config.logLevel` with `{service:"memory", version}`. */
  logger?: Logger;
  /** Default: the service's own `migrations/`. */
  migrationsDir?: string;
}

export interface MemoryServiceStats extends IngestStats {
  /** Committed batch transactions. */
  transactions: number;
}

export interface MemoryService extends RunningService {
  readonly subjects: Subjects;
  /** Resolves once the schema is migrated and the ingest loop runs (it waits for Postgres if needed). */
  readonly ingesting: Promise<void>;
  stats(): MemoryServiceStats;
}

export async function startMemoryService(deps: MemoryServiceDeps): Promise<MemoryService> {
  const { bus, config } = deps;
  const logger =
    deps.logger ?? createLogger({ service: SERVICE_NAME, version: TOOLBUS_VERSION, level: config.logLevel });
  const subjects = createSubjects(config.prefix);
  const policy: RetryPolicy = {
    ...DEFAULT_RETRY_POLICY,
    maxDeliveries: config.maxDeliveries,
    redeliveryFirstDelayMs: config.redeliveryDelayMs,
  };
  const pool = createPool(config.databaseUrl, logger);
  const store = new PgUsageStore(pool, subjects.streams.memory.name);
  let consumerSettings: { ackWaitMs: number; maxAckPending: number };
  try {
    const jsm = await bus.jsm();
    // Nothing starts on streams the provisioner did not make, or someone changed since.
    await verifyAssets(jsm, identityOf("memory"), subjects);
    // The provisioner sized the consumer (the [memory] table); this service works with what it made.
    consumerSettings = await memoryConsumerSettings(jsm, subjects);
    if (consumerSettings.maxAckPending !== -1 && consumerSettings.maxAckPending < config.batchSize) {
      logger.warn(
        { maxAckPending: consumerSettings.maxAckPending, batchSize: config.batchSize },
        "the memory consumer hands out fewer unacknowledged messages than one batch; run toolbus provision with this batch size",
      );
    }
    await serveEndpoints(bus, subjects, store);
  } catch (err) {
    await pool.end();
    throw err;
  }

  const stats = emptyIngestStats();
  const loop = new IngestLoop({
    bus,
    subjects,
    batchSize: config.batchSize,
    ...consumerSettings,
    policy,
    logger,
    stats,
    metrics: memoryRecorder(),
    handle: (deliveries) =>
      ingestBatch(deliveries, { store, policy, logger, now: () => Math.floor(Date.now() / 1000) }),
  });
  const stopping = new AbortController();
  const migrationsDir = deps.migrationsDir ?? DEFAULT_MIGRATIONS_DIR;
  let ingesting: Promise<void>;
  try {
    await runMigrations(pool, migrationsDir, logger);
    loop.start();
    ingesting = Promise.resolve();
  } catch (err) {
    if (!(err instanceof StoreError && err.kind === "transient")) {
      await pool.end();
      throw err;
    }
    logger.warn(
      { err },
      `the memory database is unreachable at start-up (${err.message}); strip is served, counting starts once it is back`,
    );
    ingesting = migrateWhenReachable(pool, migrationsDir, logger, stopping.signal).then((migrated) => {
      if (migrated) loop.start();
    });
  }

  let stopped: Promise<void> | undefined;
  return {
    subjects,
    ingesting,
    stats: () => ({ ...stats, transactions: store.transactions }),
    drain: (drainOptions) => bus.drain(drainOptions),
    // Ingest (the batch in hand finishes), then the pool.
    stop() {
      stopped ??= (async () => {
        stopping.abort();
        await ingesting;
        await loop.stop();
        await pool.end();
      })();
      return stopped;
    },
  };
}

async function serveEndpoints(bus: Bus, subjects: Subjects, store: UsageStore): Promise<void> {
  await bus.serve(
    {
      subject: subjects.memoryStrip,
      name: "strip",
      request: MemoryStripRequestSchema,
      spanName: "toolbus.memory.strip",
    },
    async (request) => strip(request),
  );
  await bus.serve(
    {
      subject: subjects.memoryUsage,
      name: "usage",
      request: MemoryUsageRequestSchema,
      spanName: "toolbus.memory.usage",
    },
    (request) => usage(request, { store }),
  );
  await bus.serve(
    {
      subject: internalSubjects(subjects.prefix).memoryParked,
      name: "parked",
      request: MemoryParkedRequestSchema,
      spanName: "toolbus.memory.parked",
    },
    (request) => parked(request, { store }),
  );
}

/** Retries the migrations until they succeed (true) or the service stops (false). */
async function migrateWhenReachable(
  pool: pg.Pool,
  dir: string,
  logger: Logger,
  signal: AbortSignal,
): Promise<boolean> {
  for (let attempt = 1; !signal.aborted; attempt += 1) {
    await abortableSleep(holdDelayMs(DEFAULT_RETRY_POLICY, attempt), signal);
    if (signal.aborted) return false;
    try {
      await runMigrations(pool, dir, logger);
      logger.info("the memory database is reachable; counting starts");
      return true;
    } catch (err) {
      const level = err instanceof StoreError && err.kind === "transient" ? "debug" : "error";
      logger[level]({ err, attempt }, `migrating the memory database failed; retrying`);
    }
  }
  return false;
}

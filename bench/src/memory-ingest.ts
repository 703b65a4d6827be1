/**
 * The memory ingest benchmark (issue 6): how many assistant messages, each citing 3 rollouts,
 * the memory service counts into Postgres per second, and how long a message waits between
 * its publish and its count. Each scenario starts the service in-process on its own prefix
 * and schema, publishes with JetStream msgID = messageId, and tears everything down after.
 *
 * Lag per message: one durable consumer fetches the stream in order and commits a batch
 * before it fetches the next, so the service's `counted` counter reaching k means stream
 * sequences 1..k are counted. Polling it every millisecond gives each sequence's count time;
 * the publish ack gives its sequence. That holds only with no redelivery, duplicate or
 * parked message, which every row checks.
 *
 * Loads: "burst" publishes as fast as the JetStream acks allow; "paced" at a fixed rate (the
 * lag a steady load sees); "backlog" publishes everything with the service stopped, then times
 * a new instance draining it (the service's own rate, without a publisher beside it).
 *
 * Standalone: `node --conditions=@toolbus/source --import tsx bench/src/memory-ingest.ts`.
 */
import { randomUUID } from "node:crypto";
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { type JetStreamClient, jetstream } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { connectBus, createLogger } from "@toolbus/bus";
import { DEFAULT_BUS_CONFIG, DEFAULT_MEMORY_CONFIG, provisionInputs } from "@toolbus/config";
import {
  loadMemoryConfig,
  type MemoryService,
  type MemoryServiceStats,
  startMemoryService,
} from "@toolbus/memory";
import { cleanupJetStream, isolation, provisionPrefix, withPgSchema } from "@toolbus/testkit";
import pg from "pg";
import { type BenchRow, formatTable, isEntryModule, percentile } from "./bench-table.js";

/** How the messages are offered: as fast as acks allow, at a fixed rate, or all before the service reads. */
type Load = { kind: "burst" } | { kind: "paced"; rate: number } | { kind: "backlog" };

interface Scenario {
  batchSize: number;
  messages: number;
  load: Load;
}

/** Rows run in this order; the last ones are skipped when the time budget runs out. */
const SCENARIOS: readonly Scenario[] = [
  { batchSize: 100, messages: 20_000, load: { kind: "burst" } },
  { batchSize: 500, messages: 20_000, load: { kind: "burst" } },
  { batchSize: 100, messages: 20_000, load: { kind: "paced", rate: 5_000 } },
  { batchSize: 500, messages: 20_000, load: { kind: "paced", rate: 5_000 } },
  { batchSize: 100, messages: 20_000, load: { kind: "backlog" } },
  { batchSize: 500, messages: 20_000, load: { kind: "backlog" } },
  { batchSize: 100, messages: 600, load: { kind: "paced", rate: 200 } },
  { batchSize: 500, messages: 600, load: { kind: "paced", rate: 200 } },
];

const ROLLOUTS = 30;
const CITED_PER_MESSAGE = 3;
/** Publishes awaiting their ack at once. */
const PUBLISH_WINDOW = 256;
/** No scenario starts after this, so the whole benchmark ends within ~2 minutes. */
const BUDGET_MS = 90_000;
/** A scenario starts only with at least this much of the budget left. */
const SCENARIO_MIN_MS = 10_000;
/** How long counting may trail the last publish before the scenario gives up. */
const DRAIN_TIMEOUT_MS = 20_000;
const POLL_MS = 1;

export async function runMemoryBench(): Promise<BenchRow[]> {
  return runScenarios(new AbortController().signal);
}

async function runScenarios(signal: AbortSignal): Promise<BenchRow[]> {
  const infra: Infra = {
    natsUrl: process.env.NATS_URL || "nats://127.0.0.1:4222",
    databaseUrl: process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test",
    signal,
  };
  const budgetEnd = performance.now() + BUDGET_MS;
  const rows: BenchRow[] = [];
  for (const scenario of SCENARIOS) {
    if (signal.aborted || budgetEnd - performance.now() < SCENARIO_MIN_MS) {
      const why = signal.aborted ? "interrupted" : "out of time budget";
      rows.push({ name: scenarioName(scenario), check: `skipped: ${why}` });
      continue;
    }
    rows.push(await runScenario(scenario, infra));
  }
  return rows;
}

interface Infra {
  natsUrl: string;
  databaseUrl: string;
  signal: AbortSignal;
}

function scenarioName({ batchSize, load }: Scenario): string {
  const how = load.kind === "paced" ? `paced ${load.rate}/s` : load.kind;
  return `memory ingest, batch ${batchSize}, ${how}`;
}

async function runScenario(scenario: Scenario, infra: Infra): Promise<BenchRow> {
  const cleanups: Array<() => Promise<unknown>> = [];
  try {
    const { prefix } = isolation("bench_memory");
    cleanups.push(() => cleanupJetStream(infra.natsUrl, prefix));
    const schema = await withPgSchema(infra.databaseUrl, "bench_memory");
    cleanups.push(() => schema.drop());
    const env = {
      NATS_URL: infra.natsUrl,
      DATABASE_URL: schema.url,
      TOOLBUS_PREFIX: prefix,
      MEMORY_BATCH_SIZE: String(scenario.batchSize),
    };
    // The stream and its consumer, made before the service as `toolbus provision` makes them,
    // sized by the same settings (the consumer hands out at least a few batches).
    await provisionPrefix(
      infra.natsUrl,
      prefix,
      provisionInputs({ bus: DEFAULT_BUS_CONFIG, memory: DEFAULT_MEMORY_CONFIG }, env),
    );
    const start = async () => {
      const config = loadMemoryConfig(env);
      const logger = createLogger({
        service: "memory",
        version: "bench",
        level: "warn",
        destination: process.stderr,
      });
      const bus = await connectBus({
        natsUrl: infra.natsUrl,
        service: { name: "memory", version: "1.0.0" },
        logger,
      });
      const started = await startMemoryService({ bus, config, logger });
      // Stopped as a process stops it: drained, stopped, its bus closed.
      let stopped: Promise<void> | undefined;
      const service: MemoryService = {
        ...started,
        stop: () => {
          stopped ??= started
            .drain()
            .then(() => started.stop())
            .then(() => bus.close());
          return stopped;
        },
      };
      cleanups.push(() => service.stop());
      await service.ingesting;
      return service;
    };
    let service = await start();
    const db = new pg.Pool({ connectionString: schema.url, max: 1 });
    db.on("error", () => undefined);
    cleanups.push(() => db.end());
    const rollouts = await seedRollouts(db);
    // The publisher is load, not the system measured: skip the stack capture nats.js does per request.
    const nc = await connect({ servers: infra.natsUrl, noAsyncTraces: true });
    cleanups.push(() => nc.close());
    const payloads = Array.from({ length: scenario.messages }, (_, i) => messagePayload(i, rollouts));
    const subject = service.subjects.memoryMessage;

    if (scenario.load.kind === "backlog") {
      // The stream and the durable consumer stay; a new service instance drains what piled up.
      await service.stop();
      const published = await publishAll(jetstream(nc), subject, payloads, undefined);
      service = await start();
      return await measure(scenario, service, db, infra.signal, published, performance.now());
    }
    const rate = scenario.load.kind === "paced" ? scenario.load.rate : undefined;
    return await measure(
      scenario,
      service,
      db,
      infra.signal,
      publishAll(jetstream(nc), subject, payloads, rate),
    );
  } catch (err) {
    return {
      name: scenarioName(scenario),
      check: `failed: ${err instanceof Error ? err.message : String(err)}`,
    };
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  }
}

/** Watches `counted` while the publish runs, waits for the rest to be counted, and makes the row. */
async function measure(
  scenario: Scenario,
  service: MemoryService,
  db: pg.Pool,
  signal: AbortSignal,
  publishing: Published | Promise<Published>,
  /** Backlog: when the service began reading; else the ingest rate counts from the first publish. */
  serviceStartedAt?: number,
): Promise<BenchRow> {
  const watch = watchCounted(service, scenario.messages);
  const cpuBefore = process.cpuUsage();
  try {
    const published = await publishing;
    await watch.until(performance.now() + DRAIN_TIMEOUT_MS, signal);
    const cpu = process.cpuUsage(cpuBefore);
    const interrupted = signal.aborted;
    // Ingest stops first, so the counters and the rows it left in Postgres agree.
    await service.stop();
    const counts = {
      countedAt: watch.countedAt,
      stats: service.stats(),
      db: await totals(db),
      cpuMicros: cpu.user + cpu.system,
      interrupted,
    };
    return summarize(scenario, published, counts, serviceStartedAt);
  } finally {
    watch.stop();
  }
}

/** Inserts `stage1_outputs` rows as codex's phase 1 writes them; returns their ids. */
async function seedRollouts(db: pg.Pool): Promise<string[]> {
  const ids = Array.from({ length: ROLLOUTS }, () => randomUUID());
  await db.query(
    `INSERT INTO stage1_outputs (thread_id, source_updated_at, raw_memory, rollout_summary, generated_at)
     SELECT id, 100, 'raw', 'summary', 100 FROM unnest($1::text[]) AS t(id)`,
    [ids],
  );
  return ids;
}

/** An assistant answer ending in a citation of 3 distinct rollouts, as the model is told to write it. */
function messagePayload(i: number, rollouts: readonly string[]): { id: string; body: string } {
  const cited = Array.from(
    { length: CITED_PER_MESSAGE },
    (_, k) => rollouts[(i * CITED_PER_MESSAGE + k) % rollouts.length]!,
  );
  const text = [
    "Here is the answer.",
    "<oai-mem-citation>",
    "<citation_entries>",
    "MEMORY.md:234-236|note=[bench]",
    "</citation_entries>",
    "<rollout_ids>",
    ...cited,
    "</rollout_ids>",
    "</oai-mem-citation>",
  ].join("\n");
  const id = `bench-${i}`;
  return { id, body: JSON.stringify({ messageId: id, threadId: "bench-thread", text }) };
}

interface Published {
  /** performance.now() at each publish call, by stream sequence (1-based; index 0 unused). */
  publishedAt: Float64Array;
  firstAt: number;
  lastAckAt: number;
}

/** Publishes every payload with at most PUBLISH_WINDOW unacknowledged, at `rate` per second if given. */
async function publishAll(
  js: JetStreamClient,
  subject: string,
  payloads: ReadonlyArray<{ id: string; body: string }>,
  rate: number | undefined,
): Promise<Published> {
  const publishedAt = new Float64Array(payloads.length + 1).fill(Number.NaN);
  const start = performance.now();
  let next = 0;
  let lastAckAt = start;
  let failed = false;
  const publishNext = async () => {
    const i = next++;
    if (rate !== undefined) {
      const wait = start + (i * 1000) / rate - performance.now();
      if (wait >= 1) await new Promise((resolve) => setTimeout(resolve, wait));
    }
    const payload = payloads[i]!;
    const at = performance.now();
    const ack = await js.publish(subject, payload.body, { msgID: payload.id });
    lastAckAt = performance.now();
    if (ack.duplicate || ack.seq >= publishedAt.length) {
      throw new Error(
        `message ${payload.id} was stored as sequence ${ack.seq} (duplicate: ${ack.duplicate})`,
      );
    }
    publishedAt[ack.seq] = at;
  };
  const worker = async () => {
    try {
      while (next < payloads.length && !failed) await publishNext();
    } catch (err) {
      failed = true;
      throw err;
    }
  };
  await Promise.all(Array.from({ length: PUBLISH_WINDOW }, worker));
  return { publishedAt, firstAt: start, lastAckAt };
}

/** Samples the service's `counted` counter; `countedAt[k]` is when sequence k was first seen counted. */
function watchCounted(service: MemoryService, n: number) {
  const countedAt = new Float64Array(n + 1).fill(Number.NaN);
  let seen = 0;
  let wake: (() => void) | undefined;
  const timer = setInterval(() => {
    const counted = Math.min(n, service.stats().counted);
    const now = performance.now();
    while (seen < counted) countedAt[++seen] = now;
    if (seen >= n) wake?.();
  }, POLL_MS);
  return {
    countedAt,
    /** Resolves when all n are counted, at `deadline`, or when `signal` aborts. */
    until(deadline: number, signal: AbortSignal): Promise<void> {
      if (seen >= n || signal.aborted) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timeout);
          signal.removeEventListener("abort", done);
          resolve();
        };
        const timeout = setTimeout(done, Math.max(0, deadline - performance.now()));
        signal.addEventListener("abort", done);
        wake = done;
      });
    },
    stop: () => clearInterval(timer),
  };
}

interface Totals {
  /** Sum of usage_count over the seeded rollouts. */
  cited: number;
  processed: number;
}

async function totals(db: pg.Pool): Promise<Totals> {
  const { rows } = await db.query<Totals>(
    `SELECT (SELECT COALESCE(SUM(usage_count), 0)::int FROM stage1_outputs) AS cited,
            (SELECT COUNT(*)::int FROM memory_processed_messages) AS processed`,
  );
  return rows[0]!;
}

interface Counts {
  countedAt: Float64Array;
  stats: MemoryServiceStats;
  db: Totals;
  /** CPU time of this process while the scenario ran: the service, plus the publisher unless backlog. */
  cpuMicros: number;
  interrupted: boolean;
}

function summarize(
  scenario: Scenario,
  published: Published,
  { countedAt, stats, db, cpuMicros, interrupted }: Counts,
  serviceStartedAt: number | undefined,
): BenchRow {
  const n = scenario.messages;
  const rateFrom = serviceStartedAt ?? published.firstAt;
  const lags: number[] = [];
  let counted = 0;
  let lastCountedAt = rateFrom;
  for (let seq = 1; seq <= n; seq += 1) {
    const at = countedAt[seq]!;
    if (Number.isNaN(at)) {
      lags.push(Number.POSITIVE_INFINITY);
      continue;
    }
    counted += 1;
    lastCountedAt = Math.max(lastCountedAt, at);
    lags.push(at - published.publishedAt[seq]!);
  }
  lags.sort((a, b) => a - b);
  // A backlog's lag is how long it was left waiting: not a property of the service.
  const lag = (ms: number) => (serviceStartedAt === undefined ? formatMs(ms) : "-");
  const problems = [
    counted < n
      ? interrupted
        ? `interrupted with ${counted} of ${n} counted`
        : `only ${counted} of ${n} counted within ${DRAIN_TIMEOUT_MS / 1000} s of the last publish`
      : "",
    stats.duplicates + stats.redelivered + stats.parked > 0
      ? `lag inexact: ${stats.duplicates} duplicates, ${stats.redelivered} redelivered, ${stats.parked} parked`
      : "",
    db.processed !== stats.counted || db.cited !== stats.counted * CITED_PER_MESSAGE
      ? `Postgres has ${db.processed} processed ids and ${db.cited} citations for ${stats.counted} counted`
      : "",
  ].filter((problem) => problem !== "");
  const wallS = (lastCountedAt - rateFrom) / 1000;
  return {
    name: scenarioName(scenario),
    messages: n,
    "published msg/s": Math.round(n / ((published.lastAckAt - published.firstAt) / 1000)),
    "ingest msg/s": wallS > 0 ? Math.round(counted / wallS) : 0,
    "lag p50 ms": lag(percentile(lags, 0.5)),
    "lag p99 ms": lag(percentile(lags, 0.99)),
    "lag max ms": lag(lags[lags.length - 1] ?? Number.NaN),
    transactions: stats.transactions,
    "msgs/tx": stats.transactions > 0 ? Math.round(stats.counted / stats.transactions) : 0,
    "cpu us/msg": counted > 0 ? Math.round(cpuMicros / counted) : 0,
    // Other processes on the machine skew every number here; this says how busy it was.
    "load 1m": Math.round(loadavg()[0]! * 10) / 10,
    check: problems.length === 0 ? "ok" : problems.join("; "),
  };
}

function formatMs(ms: number): string | number {
  if (ms === Number.POSITIVE_INFINITY) return "not counted";
  if (Number.isNaN(ms)) return "n/a";
  return ms < 10 ? Math.round(ms * 10) / 10 : Math.round(ms);
}

if (isEntryModule(import.meta.url)) {
  const interrupt = new AbortController();
  // Ctrl-C stops waiting; the scenario in hand still cleans up its stream and schema.
  process.once("SIGINT", () => interrupt.abort());
  const guard = setTimeout(() => {
    console.error("the memory benchmark did not finish within 150 s; exiting");
    process.exit(1);
  }, 150_000);
  guard.unref();
  runScenarios(interrupt.signal).then(
    (rows) => {
      clearTimeout(guard);
      console.log(formatTable(rows));
    },
    (err: unknown) => {
      clearTimeout(guard);
      console.error(err);
      process.exitCode = 1;
    },
  );
}

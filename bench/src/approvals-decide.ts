import { cpus, loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { type ApprovalsService, startApprovalsService } from "@toolbus/approvals";
import { type Bus, connectBus, createLogger, type Logger } from "@toolbus/bus";
import { decide, NO_HOOKS, resolveApprovalMode, sessionKey } from "@toolbus/policy";
import {
  type ApprovalChoice,
  type ApprovalDecideRequest,
  ApprovalDecideRequestSchema,
  type ApprovalDecideResult,
  ApprovalDecideResultSchema,
  ApprovalResolveResultSchema,
} from "@toolbus/protocol";
import { cleanupJetStream, isolation, provisionPrefix, withPgSchema } from "@toolbus/testkit";
import pg from "pg";
import { type BenchRow, formatTable, isEntryModule, percentile } from "./bench-table.js";

const CORE_WARMUP = 20_000;
const CORE_ITERATIONS = 200_000;
const BUS_WARMUP = 200;
const BUS_ITERATIONS = 1_500;
const CLICK_WARMUP = 20;
const CLICK_ROUNDS = 200;
/** Each bus phase stops early at its share of the budget, so the whole run ends within ~90 s. */
const BUS_PHASE_MS = 30_000;
const CLICK_PHASE_MS = 30_000;
const STEP_TIMEOUT_MS = 10_000;
const AIM_DECIDE_P50_MS = 0.5;
const AIM_CLICK_P99_MS = 50;

const FINGERPRINT = "f".repeat(64);
const THREAD = "bench-thread";
/** `bench`: mode auto (annotations, grants); `bench_prompt`: every call asks a human. */
const SERVERS = { bench: {}, bench_prompt: { defaultToolsApprovalMode: "prompt" as const } };

export async function runApprovalsBench(): Promise<BenchRow[]> {
  return runBench(new AbortController().signal);
}

function callRequest(callId: string, server: string, tool: string, readOnly: boolean): ApprovalDecideRequest {
  return {
    callId,
    threadId: THREAD,
    turnId: "bench-turn",
    server,
    tool,
    hookName: `mcp__${server}__${tool}`,
    arguments: { path: "/tmp/bench.txt", text: "hello" },
    ...(readOnly ? { annotations: { readOnlyHint: true } } : {}),
    fingerprint: FINGERPRINT,
    catalogRevision: 1,
  };
}

async function runBench(signal: AbortSignal): Promise<BenchRow[]> {
  const natsUrl = process.env.NATS_URL || "nats://127.0.0.1:4222";
  const databaseUrl = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";
  const rows: BenchRow[] = coreRows();
  const cleanups: Array<() => Promise<unknown>> = [];
  try {
    const { prefix } = isolation("bench_approvals");
    // Connects with a 5 s timeout: fails fast when NATS is down (connectBus would wait forever).
    await cleanupJetStream(natsUrl, prefix);
    cleanups.push(() => cleanupJetStream(natsUrl, prefix));
    // Before the service, as `toolbus provision` runs: its buckets.
    await provisionPrefix(natsUrl, prefix);
    const schema = await withPgSchema(databaseUrl, "bench_approvals");
    cleanups.push(() => schema.drop());
    const logger = benchLogger("approvals");
    const serviceBus = await connectBus({
      natsUrl,
      service: { name: "approvals", version: "0.0.0" },
      logger,
    });
    cleanups.push(() => serviceBus.close());
    const service = await startApprovalsService({
      bus: serviceBus,
      config: {
        databaseUrl: schema.url,
        prefix,
        servers: SERVERS,
        http: { host: "127.0.0.1", port: 0 },
        shutdownGraceMs: 2_000,
      },
      logger,
    });
    cleanups.push(async () => {
      await service.drain();
      await service.stop();
    });
    const client = await connectBus({ natsUrl, service: { name: "bench-client", version: "0.0.0" }, logger });
    cleanups.push(() => client.close());
    const echoBus = await connectBus({ natsUrl, service: { name: "bench-echo", version: "0.0.0" }, logger });
    cleanups.push(() => echoBus.close());
    const db = new pg.Pool({ connectionString: schema.url, max: 1 });
    db.on("error", () => undefined);
    cleanups.push(() => db.end());
    const human = await humanInbox(client, service);
    cleanups.push(async () => human.close());

    // One "allow for this session" makes the session-grant decides below settle without a human.
    const grant = await human.round(
      callRequest("bench-grant", "bench", "write_file", false),
      "allow_session",
    );
    if (grant.result.decision !== "approved_for_session")
      throw new Error(`granting the session gave ${grant.result.decision}`);

    rows.push(...(await busRows({ client, echoBus, service, serviceBus, db, signal })));
    rows.push(...(await clickRows(human, signal)));
    rows.push(await environmentRow(db));
  } catch (err) {
    rows.push({
      name: "approvals bench",
      check: `failed: ${err instanceof Error ? err.message : String(err)}`,
    });
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  }
  return rows;
}

/** Info lines are formatted as in production but discarded; warnings and errors go to stderr. */
function benchLogger(service: string): Logger {
  return createLogger({
    service,
    version: "bench",
    level: "info",
    destination: {
      write: (line: string) => {
        if (!/^\{"level":(10|20|30),/.test(line)) process.stderr.write(line);
      },
    },
  });
}

/** The dispatcher's local evaluation (approvals-client.ts): mode resolution, then the core's first step. */
function coreRows(): BenchRow[] {
  const request = callRequest("bench-core", "bench", "read_file", true);
  const servers: Record<string, { defaultToolsApprovalMode?: "prompt" }> = SERVERS;
  const state = { policy: "on-request" as const, hooks: NO_HOOKS, timeoutMs: 600_000 };
  let undecided = 0;
  const local = () => {
    const mode = resolveApprovalMode(undefined, servers[request.server]?.defaultToolsApprovalMode);
    const step = decide({ request, mode, now: Date.now() }, state);
    if (step.kind !== "decided" || step.result.source !== "annotations") undecided += 1;
  };
  for (let i = 0; i < CORE_WARMUP; i += 1) local();
  const samples = new Float64Array(CORE_ITERATIONS);
  const timer = new Float64Array(CORE_ITERATIONS);
  for (let i = 0; i < CORE_ITERATIONS; i += 1) {
    const t0 = performance.now();
    local();
    const t1 = performance.now();
    samples[i] = t1 - t0;
    timer[i] = performance.now() - t1;
  }
  const floor = formatMs(percentile(sortedOf(timer), 0.5));
  return [
    latencyRow("decide in-process (core, as the dispatcher)", sortedOf(samples), {
      addsItself: true,
      aim: `added p50 < ${AIM_DECIDE_P50_MS} ms`,
      check: `${undecided === 0 ? "ok" : `${undecided} not settled by annotations`}; timer floor ${floor} ms included`,
    }),
  ];
}

interface BusDeps {
  client: Bus;
  echoBus: Bus;
  service: ApprovalsService;
  /** The service's own bus. */
  serviceBus: Bus;
  db: pg.Pool;
  signal: AbortSignal;
}

/** The bus paths and their parts, interleaved in rotating order so drift and load hit all alike. */
async function busRows({ client, echoBus, service, serviceBus, db, signal }: BusDeps): Promise<BenchRow[]> {
  const { subjects } = service;
  const rawEcho = `${subjects.prefix}.bench.echo_raw`;
  const busEcho = `${subjects.prefix}.bench.echo_bus`;
  // The raw echo answers on the service's own connection: the same sockets as a decide reply.
  const echoSub = serviceBus.nc.subscribe(rawEcho, {
    callback: (err, msg) => {
      if (err === null) msg.respond(msg.data);
    },
  });
  await serviceBus.nc.flush();
  await echoBus.serve({ subject: busEcho, name: "echo", request: ApprovalDecideRequestSchema }, async () => ({
    decision: "approved",
    source: "annotations",
  }));
  const kv = await client.kvm().open(subjects.kv.approvalGrants);
  // What every request put to a human and every answer pays once: a commit (dropped with the schema).
  await db.query(
    "CREATE TABLE bench_commit (id int PRIMARY KEY, n int NOT NULL); INSERT INTO bench_commit VALUES (1, 0)",
  );
  const grantKey = sessionKey("auto", { threadId: THREAD, server: "bench", tool: "write_file" });
  if (grantKey === undefined) throw new Error("no session key for the granted tool");
  const echoBody = JSON.stringify(callRequest("bench-echo", "bench", "read_file", true));
  const decideOver = (callId: string, tool: string) =>
    client.request(
      subjects.approvalsDecide,
      callRequest(callId, "bench", tool, tool === "read_file"),
      ApprovalDecideResultSchema,
    );
  /** `expect`: the `decision/source` every reply must have. */
  const ops: Array<{ name: string; expect?: string; run: (i: number) => Promise<unknown> }> = [
    { name: "nats echo (raw request/reply, baseline)", run: () => client.nc.request(rawEcho, echoBody) },
    {
      name: "bus echo (bus.serve + bus.request, no work)",
      run: () => client.request(busEcho, JSON.parse(echoBody), ApprovalDecideResultSchema),
    },
    {
      name: "part: postgres SELECT by request id",
      run: (i) => db.query("SELECT * FROM approval_requests WHERE request_id = $1", [`bench-miss-${i}`]),
    },
    { name: "part: KV get of a session grant", run: () => kv.get(grantKey) },
    {
      name: "part: postgres one-row UPDATE commit",
      run: () => db.query("UPDATE bench_commit SET n = n + 1 WHERE id = 1"),
    },
    {
      name: "decide over the bus (annotations)",
      expect: "approved/annotations",
      run: (i) => decideOver(`bench-ann-${i}`, "read_file"),
    },
    {
      name: "decide over the bus (session grant)",
      expect: "approved_for_session/session",
      run: (i) => decideOver(`bench-ses-${i}`, "write_file"),
    },
  ];
  const wrong = new Map<string, string>();
  const samples = ops.map(() => [] as number[]);
  const stopAt = performance.now() + BUS_PHASE_MS;
  let iterations = 0;
  for (let i = 0; i < BUS_WARMUP + BUS_ITERATIONS; i += 1) {
    if (signal.aborted || performance.now() > stopAt) break;
    for (let k = 0; k < ops.length; k += 1) {
      const index = (i + k) % ops.length;
      const op = ops[index]!;
      const t0 = performance.now();
      const reply = await op.run(i);
      const elapsed = performance.now() - t0;
      if (i >= BUS_WARMUP) samples[index]!.push(elapsed);
      const got =
        op.expect && `${(reply as ApprovalDecideResult).decision}/${(reply as ApprovalDecideResult).source}`;
      if (got !== op.expect) wrong.set(op.name, `answered ${got} instead of ${op.expect}`);
    }
    if (i >= BUS_WARMUP) iterations += 1;
  }
  echoSub.unsubscribe();

  const baseline = sortedOf(samples[0]!);
  const short =
    iterations < BUS_ITERATIONS
      ? `; stopped early (time budget or Ctrl-C) at ${iterations} of ${BUS_ITERATIONS}`
      : "";
  return ops.map((op, index) =>
    latencyRow(op.name, sortedOf(samples[index]!), {
      ...(index > 0 && !op.name.startsWith("part") ? { baseline } : {}),
      ...(op.expect ? { aim: `added p50 < ${AIM_DECIDE_P50_MS} ms` } : {}),
      check: `${wrong.get(op.name) ?? "ok"}${short}`,
    }),
  );
}

interface HumanRound {
  result: ApprovalDecideResult;
  /** From sending decide to the pending event. */
  pendingMs: number;
  /** From just before the POST (or bus resolve) to its answer. */
  answerMs: number;
  /** From just before the POST to the decide reply. */
  resumeMs: number;
}

/** Listens for pending events and answers them through the service's HTTP, as a human in the inbox. */
async function humanInbox(client: Bus, service: ApprovalsService) {
  const httpUrl = service.httpUrl;
  if (httpUrl === undefined) throw new Error("the approvals service serves no HTTP");
  const waiting = new Map<string, (event: { at: number; requestId: string }) => void>();
  const sub = client.nc.subscribe(service.subjects.approvalsPending, {
    callback: (err, msg) => {
      if (err) return;
      const at = performance.now();
      try {
        const event = JSON.parse(msg.string()) as { callId: string; requestId: string };
        waiting.get(event.callId)?.({ at, requestId: event.requestId });
      } catch {
        // Not a pending event this bench sent; the round's own timeout reports a missing one.
      }
    },
  });
  await client.nc.flush();

  /** `via`: the inbox's POST (default), or the bus `resolve` request the HTTP route makes behind it. */
  const round = async (
    request: ApprovalDecideRequest,
    choice: ApprovalChoice,
    via: "http" | "bus" = "http",
  ): Promise<HumanRound> => {
    const pending = new Promise<{ at: number; requestId: string }>((resolve) =>
      waiting.set(request.callId, resolve),
    );
    let resumedAt = Number.NaN;
    const sentAt = performance.now();
    const decided = client
      .request(service.subjects.approvalsDecide, request, ApprovalDecideResultSchema, { timeoutMs: 30_000 })
      .then((result) => {
        resumedAt = performance.now();
        return result;
      });
    try {
      const event = await Promise.race([
        pending,
        decided.then((r) =>
          Promise.reject(new Error(`decide answered ${r.decision} without asking a human`)),
        ),
        timeout(STEP_TIMEOUT_MS, `no pending event for ${request.callId}`),
      ]);
      const clickAt = performance.now();
      if (via === "bus") {
        const resolve = { requestId: event.requestId, choice };
        await client.request(service.subjects.approvalsResolve, resolve, ApprovalResolveResultSchema);
      } else {
        const url = `${httpUrl}/v1/approvals/${encodeURIComponent(event.requestId)}`;
        const response = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ choice }),
        });
        const body = await response.text();
        if (!response.ok) throw new Error(`POST answered ${response.status}: ${body}`);
      }
      const answeredAt = performance.now();
      const result = await Promise.race([
        decided,
        timeout(STEP_TIMEOUT_MS, `decide did not resume for ${request.callId}`),
      ]);
      return {
        result,
        pendingMs: event.at - sentAt,
        answerMs: answeredAt - clickAt,
        resumeMs: resumedAt - clickAt,
      };
    } finally {
      waiting.delete(request.callId);
      decided.catch(() => undefined);
    }
  };
  return { round, close: () => sub.unsubscribe() };
}

/** HTTP rounds (the measured click) alternate with bus-resolve rounds (what the HTTP layer adds). */
async function clickRows(
  human: Awaited<ReturnType<typeof humanInbox>>,
  signal: AbortSignal,
): Promise<BenchRow[]> {
  const seen = { http: { resume: [] as number[], answer: [] as number[] }, bus: { resume: [] as number[] } };
  const pending: number[] = [];
  let wrong = "";
  const stopAt = performance.now() + CLICK_PHASE_MS;
  for (let i = 0; i < CLICK_WARMUP + 2 * CLICK_ROUNDS; i += 1) {
    if (signal.aborted || performance.now() > stopAt) break;
    const via = i % 2 === 0 ? "http" : "bus";
    const request = callRequest(`bench-click-${i}`, "bench_prompt", "run", false);
    const round = await human.round(request, "allow", via);
    if (round.result.decision !== "approved" || round.result.source !== "human") {
      wrong = `round ${i} answered ${round.result.decision}/${round.result.source}`;
    }
    if (i < CLICK_WARMUP) continue;
    pending.push(round.pendingMs);
    seen[via].resume.push(round.resumeMs);
    if (via === "http") seen.http.answer.push(round.answerMs);
  }
  const rounds = seen.http.resume.length;
  const short =
    rounds < CLICK_ROUNDS ? `; stopped early (time budget or Ctrl-C) at ${rounds} of ${CLICK_ROUNDS}` : "";
  const check = `${wrong || "ok"}${short}`;
  return [
    latencyRow("human click (POST) → waiting decide resumes", sortedOf(seen.http.resume), {
      aim: `p99 < ${AIM_CLICK_P99_MS} ms`,
      check,
    }),
    latencyRow("human click (POST) → POST answered", sortedOf(seen.http.answer), { check }),
    latencyRow("answer by bus resolve → decide resumes", sortedOf(seen.bus.resume), { check }),
    latencyRow("decide sent → pending event (prompt)", sortedOf(pending), { check }),
  ];
}

async function environmentRow(db: pg.Pool): Promise<BenchRow> {
  const { rows } = await db.query<{ sc: string; fsync: string }>(
    "SELECT current_setting('synchronous_commit') AS sc, current_setting('fsync') AS fsync",
  );
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
  return {
    name: "environment",
    check: `${cpus().length} cpus, load ${load}; postgres synchronous_commit=${rows[0]?.sc}, fsync=${rows[0]?.fsync}`,
  };
}

function latencyRow(
  name: string,
  sorted: readonly number[],
  extra: {
    /** Added latency = this row's percentile − the baseline's. */
    baseline?: readonly number[];
    /** No hop to subtract: the whole time is added. */
    addsItself?: boolean;
    aim?: string;
    check: string;
  },
): BenchRow {
  const p50 = percentile(sorted, 0.5);
  const p99 = percentile(sorted, 0.99);
  const row: BenchRow = {
    name,
    samples: sorted.length,
    "p50 ms": formatMs(p50),
    "p99 ms": formatMs(p99),
    "max ms": formatMs(sorted[sorted.length - 1] ?? Number.NaN),
  };
  let addedP50: number | undefined;
  if (extra.baseline !== undefined || extra.addsItself === true) {
    const [base50, base99] = extra.baseline
      ? [percentile(extra.baseline, 0.5), percentile(extra.baseline, 0.99)]
      : [0, 0];
    addedP50 = p50 - base50;
    row["added p50 ms"] = formatMs(addedP50);
    row["added p99 ms"] = formatMs(p99 - base99);
  }
  if (extra.aim !== undefined) {
    const met = addedP50 !== undefined ? addedP50 < AIM_DECIDE_P50_MS : p99 < AIM_CLICK_P99_MS;
    row.aim = `${extra.aim}: ${sorted.length === 0 ? "not measured" : met ? "met" : "missed"}`;
  }
  row.check = extra.check;
  return row;
}

function sortedOf(values: ArrayLike<number>): number[] {
  return Array.from(values).sort((a, b) => a - b);
}

/** Three significant digits below 1 ms (so microseconds show), one decimal above. */
function formatMs(ms: number): string | number {
  if (Number.isNaN(ms)) return "n/a";
  if (Math.abs(ms) < 1) return Number(ms.toPrecision(3));
  return Math.round(ms * 10) / 10;
}

function timeout(ms: number, message: string): Promise<never> {
  return new Promise((_, reject) =>
    setTimeout(() => reject(new Error(`${message} within ${ms} ms`)), ms).unref(),
  );
}

if (isEntryModule(import.meta.url)) {
  const interrupt = new AbortController();
  // Ctrl-C stops measuring; the service, stream and schema are still cleaned up.
  process.once("SIGINT", () => interrupt.abort());
  const guard = setTimeout(() => {
    console.error("the approvals benchmark did not finish within 120 s; exiting");
    process.exit(1);
  }, 120_000);
  guard.unref();
  runBench(interrupt.signal).then(
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

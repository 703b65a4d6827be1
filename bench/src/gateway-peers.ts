/**
 * The gateway benchmark (issues 7 and 14): `echo` calls to server-everything through three MCP
 * edges over streamable HTTP, each its own processes (bench/src/gateway-edges.ts): the toolbus
 * gateway with the catalog and the dispatcher (on a nats-server of the bench's own, the tool in
 * approval mode `approve`), `supergateway` and `mcp-proxy`. One harness for all three: the MCP
 * SDK Client over StreamableHTTPClientTransport, one session per concurrent worker, each listing
 * tools first; 100 warm-up calls, then 1,000 measured in rounds of 100 that take turns between
 * the edges, at concurrency 1 and 16. Then 10,000 calls through toolbus alone at concurrency 16.
 *
 * Tables, all from the one run:
 * - the edges: calls/s, p50, p99 (nearest rank), toolbus ÷ peer on the peers' rows; toolbus
 *   also with MCP 2026-07-28 clients (the v2 SDK's client, each request on its own);
 * - issue 14's aims for the edge: at concurrency 1 toolbus's p50 at most the better peer's, at
 *   concurrency 16 its calls/s at least 1.3 × the better peer's;
 * - CPU per call of every process behind each edge, read from /proc before and after each of
 *   its batches (so the other edges' turns are not counted), against issue 14's aims: gateway
 *   250 µs, dispatcher 150 µs, catalog connector 150 µs; and how much of it the process spends
 *   anyway with no calls (timers, heartbeats), measured while all are idle;
 * - resident memory of toolbus's processes idle (after start-up and 100 calls) and after the
 *   10,000-call phase, against the aims 100 MB and 150 MB.
 * When a budget runs out, the rows say how many calls they hold.
 *
 * Standalone, after `pnpm build`: `node --conditions=@toolbus/source --import tsx bench/src/gateway-peers.ts`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { freePort, isolation, startNatsServer } from "@toolbus/testkit";
import { type BenchRow, type BenchTable, formatResult, isEntryModule, percentile } from "./bench-table.js";
import { CpuPerCall, readRss, rssRows } from "./cpu-per-call.js";
import { profileTables } from "./cpu-profile.js";
import {
  type BenchSession,
  closeSession,
  EDGES,
  type Edge,
  modernEdgeOf,
  openSession,
  PEERS,
  startMcpProxy,
  startSupergateway,
  startToolbus,
} from "./gateway-edges.js";
import { clockTicksPerSecond, procAvailable } from "./process-usage.js";

const CALLS = 1_000;
const WARMUP_CALLS = 100;
/** The calls of an edge are made in rounds of this many, taking turns with the other edges. */
const ROUND_CALLS = 100;
const CONCURRENCIES = [1, 16] as const;
/** No call of the comparison starts later than this after start-up. */
const BUDGET_MS = 120_000;
/** Issue 14: memory after 10,000 calls; at this concurrency, within its own budget. */
const LOAD_CALLS = 10_000;
const LOAD_CONCURRENCY = 16;
const LOAD_BATCH_CALLS = 1_000;
const LOAD_BUDGET_MS = 90_000;
/**
 * Between the warm-up and reading idle memory (the last replies' garbage goes meanwhile): also
 * the window in which each process's CPU with no calls is measured.
 */
const IDLE_MS = 3_000;
/** The guard adds start-up and clean-up time to the budgets. */
const GUARD_MS = 420_000;
/** Issue 14's aims for the edge. */
const P50_AIM_CONCURRENCY = 1;
const THROUGHPUT_AIM_CONCURRENCY = 16;
const THROUGHPUT_AIM = 1.3;

interface Measured {
  /** Fewer than asked when the budget ran out. */
  calls: number;
  callsPerSecond: number;
  p50: number;
  p99: number;
  errors: number;
}

/** Clean-ups of the run in progress, so the standalone guard can still run them. */
const pendingCleanups: Array<() => Promise<unknown>> = [];

export async function runGatewayBench(): Promise<BenchTable[]> {
  if (!procAvailable()) throw new Error("the gateway benchmark reads CPU and memory from /proc: Linux only");
  const { prefix } = isolation("bench_gateway");
  const cleanups = pendingCleanups;
  const dir = mkdtempSync(join(tmpdir(), "toolbus-bench-gateway-"));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  const tables: BenchTable[] = [];
  try {
    // Its own nats-server, so the CPU it shows is toolbus's calls and nobody else's.
    // Its monitoring endpoint counts the messages a call makes on the bus (/varz).
    const monitorPort = await freePort();
    const nats = await startNatsServer({ config: `http: "127.0.0.1:${monitorPort}"` });
    cleanups.push(() => nats.stop());
    // Settled, not raced: an edge still starting after another failed would outlive the clean-up.
    const starting = await Promise.allSettled([
      startToolbus({ natsUrl: nats.url, natsPid: nats.pid, prefix, dir, cleanups }),
      startSupergateway(cleanups),
      startMcpProxy(cleanups),
    ]);
    const [toolbus, ...peers] = starting.map((outcome) => {
      if (outcome.status === "rejected") throw outcome.reason;
      return outcome.value;
    }) as [Edge, ...Edge[]];
    const edges = [toolbus, modernEdgeOf(toolbus), ...peers];

    await warmUp(toolbus);
    const cpu = new CpuPerCall();
    await cpu.idle(
      [toolbus, ...peers].flatMap((edge) => edge.watched),
      IDLE_MS,
    );
    const idle = readRss(toolbus.watched);

    const deadline = Date.now() + BUDGET_MS;
    const results = new Map<string, Measured | Error>();
    for (const [index, concurrency] of CONCURRENCIES.entries()) {
      // Each concurrency gets an even share of what is left, so a slow machine still measures both.
      const share = Date.now() + (deadline - Date.now()) / (CONCURRENCIES.length - index);
      for (const [name, measured] of await runRounds(edges, concurrency, share, cpu)) {
        results.set(`${name} ${concurrency}`, measured);
      }
    }
    const load = await runLoad(toolbus, cpu, `http://127.0.0.1:${monitorPort}`);
    const loaded = readRss(toolbus.watched);

    const tick = 1000 / clockTicksPerSecond();
    tables.push(
      {
        title: "edges: echo through each, turns taken in rounds of 100",
        rows: [...CONCURRENCIES.flatMap((concurrency) => rowsAt(concurrency, results)), loadRow(load)],
      },
      { title: "aims for the edge (issue 14)", rows: aimRows(results) },
      {
        title: `CPU per call of each process, from /proc over each edge's own batches (one tick is ${tick} ms); "of it idle": what the process spends with no calls (${IDLE_MS / 1000} s measured before the calls) over the batches' time`,
        rows: cpu.rows(),
      },
      {
        title: `toolbus's resident memory: idle after start-up and ${WARMUP_CALLS} calls; loaded after the comparison's calls and then the ${LOAD_CALLS.toLocaleString("en")}-call phase (${loadHeld(load)})`,
        rows: rssRows(toolbus.watched, idle, loaded),
      },
    );
  } finally {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  }
  // The services wrote their profiles when they stopped.
  return [...tables, ...profileTables()];
}

function rowsAt(concurrency: number, results: ReadonlyMap<string, Measured | Error>): BenchRow[] {
  const at = (name: string) => measuredAt(results, name, concurrency);
  const toolbus = at("toolbus");
  const row = (name: string): BenchRow => {
    const result = results.get(`${name} ${concurrency}`);
    const measured = at(name);
    if (!measured) {
      const why =
        result instanceof Error ? `failed: ${result.message.split("\n")[0]}` : "the budget ran out first";
      return { name: `${name} c=${concurrency}`, concurrency, calls: 0, note: why };
    }
    const vs = (value: number) => (name !== "toolbus" && toolbus ? round(value, 2) : "");
    return {
      ...measuredRow(`${name} c=${concurrency}`, concurrency, measured),
      "toolbus ÷ peer calls/s": vs((toolbus?.callsPerSecond ?? 0) / measured.callsPerSecond),
      "toolbus ÷ peer p50": vs((toolbus?.p50 ?? 0) / measured.p50),
      note: measured.calls < CALLS ? `budget of ${BUDGET_MS / 1000} s reached` : "",
    };
  };
  return EDGES.map(row);
}

function measuredAt(
  results: ReadonlyMap<string, Measured | Error>,
  name: string,
  concurrency: number,
): Measured | undefined {
  const result = results.get(`${name} ${concurrency}`);
  return result instanceof Error || result === undefined || result.calls === 0 ? undefined : result;
}

function measuredRow(name: string, concurrency: number, measured: Measured): BenchRow {
  return {
    name,
    concurrency,
    calls: measured.calls,
    "calls/s": round(measured.callsPerSecond, 0),
    "p50 ms": round(measured.p50, 3),
    "p99 ms": round(measured.p99, 3),
    errors: measured.errors,
  };
}

/** Issue 14's two aims for the edge, each against the better of the peers at that concurrency. */
function aimRows(results: ReadonlyMap<string, Measured | Error>): BenchRow[] {
  const peers = PEERS;
  const compare = (
    aim: string,
    concurrency: number,
    value: (measured: Measured) => number,
    better: "lower" | "higher",
    met: (toolbus: number, peer: number) => boolean,
    unit: string,
  ): BenchRow => {
    const toolbus = measuredAt(results, "toolbus", concurrency);
    const measuredPeers = peers.flatMap((name) => {
      const measured = measuredAt(results, name, concurrency);
      return measured ? [{ name, value: value(measured) }] : [];
    });
    const best = measuredPeers.sort((a, b) =>
      better === "lower" ? a.value - b.value : b.value - a.value,
    )[0];
    if (!toolbus || !best) return { name: aim, "met?": "not measured" };
    const own = value(toolbus);
    return {
      name: aim,
      toolbus: `${round(own, 3)} ${unit}`,
      "better peer": `${best.name} ${round(best.value, 3)} ${unit}`,
      "toolbus ÷ better peer": round(own / best.value, 2),
      "met?": met(own, best.value) ? "met" : "missed",
    };
  };
  return [
    compare(
      `c=${P50_AIM_CONCURRENCY}: toolbus p50 ≤ better peer's p50`,
      P50_AIM_CONCURRENCY,
      (measured) => measured.p50,
      "lower",
      (own, peer) => own <= peer,
      "ms",
    ),
    compare(
      `c=${THROUGHPUT_AIM_CONCURRENCY}: toolbus calls/s ≥ ${THROUGHPUT_AIM} × better peer's`,
      THROUGHPUT_AIM_CONCURRENCY,
      (measured) => measured.callsPerSecond,
      "higher",
      (own, peer) => own >= THROUGHPUT_AIM * peer,
      "calls/s",
    ),
  ];
}

/** The calls of one edge at one concurrency, gathered over the rounds. */
interface Tally {
  calls: number;
  latencies: number[];
  elapsedMs: number;
  errors: number;
}

/**
 * Every edge at one concurrency: `concurrency` sessions each, the warm-up, then the calls in
 * rounds of ROUND_CALLS that take turns between the edges (the first edge rotating), so a
 * change in the machine's load falls on all three alike. Past the deadline no round starts.
 */
async function runRounds(
  edges: readonly Edge[],
  concurrency: number,
  deadline: number,
  cpu: CpuPerCall,
): Promise<Map<string, Measured | Error>> {
  const outcome = new Map<string, Measured | Error>();
  const open = new Map<Edge, BenchSession[]>();
  try {
    for (const edge of edges) {
      try {
        open.set(edge, await openSessions(edge, concurrency));
        await callBatch(WARMUP_CALLS, open.get(edge)!, edge.tool);
      } catch (error) {
        outcome.set(edge.name, error instanceof Error ? error : new Error(String(error)));
      }
    }
    const running = edges.filter((edge) => open.has(edge) && !outcome.has(edge.name));
    const tallies = new Map(running.map((edge) => [edge, emptyTally()]));
    for (let round = 0; round < CALLS / ROUND_CALLS && Date.now() < deadline; round++) {
      for (let turn = 0; turn < running.length; turn++) {
        const edge = running[(round + turn) % running.length]!;
        // toolbus's 2026-07-28 clients use the same processes: their CPU is counted on rows of their own.
        const run = edge.era === undefined ? `c=${concurrency}` : `c=${concurrency}, ${edge.era} clients`;
        const batch = await cpu.around(edge.watched, run, () =>
          callBatch(ROUND_CALLS, open.get(edge)!, edge.tool),
        );
        addTo(tallies.get(edge)!, batch);
      }
    }
    for (const [edge, tally] of tallies) outcome.set(edge.name, summarize(tally));
    return outcome;
  } finally {
    await Promise.all([...open.values()].flat().map(closeSession));
  }
}

/** What the phase of LOAD_CALLS through toolbus alone held. */
interface Load {
  measured: Measured | undefined;
  /** Why it holds fewer calls than asked, or failed. */
  shortfall: string;
  /** Messages toolbus's processes published to nats-server, and it delivered, over the phase. */
  natsMessages?: NatsMessages;
}

interface NatsMessages {
  in: number;
  out: number;
}

/** nats-server's message counters, from its monitoring endpoint. */
async function natsMessages(monitorUrl: string): Promise<NatsMessages> {
  const varz = (await (await fetch(`${monitorUrl}/varz`)).json()) as { in_msgs: number; out_msgs: number };
  return { in: varz.in_msgs, out: varz.out_msgs };
}

/** LOAD_CALLS through toolbus at LOAD_CONCURRENCY, in batches, until done or its budget is spent. */
async function runLoad(toolbus: Edge, cpu: CpuPerCall, natsMonitorUrl: string): Promise<Load> {
  const deadline = Date.now() + LOAD_BUDGET_MS;
  const tally = emptyTally();
  let sessions: BenchSession[] = [];
  let messages: NatsMessages | undefined;
  try {
    sessions = await openSessions(toolbus, LOAD_CONCURRENCY);
    const before = await natsMessages(natsMonitorUrl);
    while (tally.calls < LOAD_CALLS && Date.now() < deadline) {
      const n = Math.min(LOAD_BATCH_CALLS, LOAD_CALLS - tally.calls);
      const batch = await cpu.around(toolbus.watched, loadRun(), () => callBatch(n, sessions, toolbus.tool));
      addTo(tally, batch);
    }
    const after = await natsMessages(natsMonitorUrl);
    messages = { in: after.in - before.in, out: after.out - before.out };
  } catch (error) {
    return {
      measured: tally.calls > 0 ? summarize(tally) : undefined,
      shortfall: `failed: ${String(error)}`,
    };
  } finally {
    await Promise.all(sessions.map(closeSession));
  }
  const shortfall = tally.calls < LOAD_CALLS ? `budget of ${LOAD_BUDGET_MS / 1000} s reached` : "";
  return {
    measured: tally.calls > 0 ? summarize(tally) : undefined,
    shortfall,
    ...(messages ? { natsMessages: messages } : {}),
  };
}

function loadRun(): string {
  return `c=${LOAD_CONCURRENCY}, ${LOAD_CALLS.toLocaleString("en")}-call phase`;
}

function loadRow(load: Load): BenchRow {
  const name = `toolbus ${loadRun()}`;
  if (!load.measured) return { name, concurrency: LOAD_CONCURRENCY, calls: 0, note: load.shortfall };
  const calls = load.measured.calls;
  const messages = load.natsMessages
    ? `NATS messages a call: ${round(load.natsMessages.in / calls, 1)} published, ${round(load.natsMessages.out / calls, 1)} delivered`
    : "";
  return {
    ...measuredRow(name, LOAD_CONCURRENCY, load.measured),
    note: [messages, load.shortfall].filter((part) => part !== "").join("; "),
  };
}

function loadHeld(load: Load): string {
  const calls = load.measured?.calls ?? 0;
  return calls >= LOAD_CALLS
    ? `${calls.toLocaleString("en")} calls`
    : `it held ${calls.toLocaleString("en")} calls: ${load.shortfall}`;
}

/** WARMUP_CALLS through one session, as a first client would make them. */
async function warmUp(edge: Edge): Promise<void> {
  const sessions = await openSessions(edge, 1);
  try {
    await callBatch(WARMUP_CALLS, sessions, edge.tool);
  } finally {
    await Promise.all(sessions.map(closeSession));
  }
}

/** `concurrency` sessions, all or none. */
async function openSessions(edge: Edge, concurrency: number): Promise<BenchSession[]> {
  const opening = await Promise.allSettled(Array.from({ length: concurrency }, () => openSession(edge)));
  const sessions = opening.flatMap((outcome) => (outcome.status === "fulfilled" ? [outcome.value] : []));
  const failed = opening.find((outcome) => outcome.status === "rejected");
  if (failed) {
    await Promise.all(sessions.map(closeSession));
    throw new Error(`opening a session on ${edge.name}: ${String(failed.reason)}`);
  }
  return sessions;
}

/** `n` calls spread over the sessions, one call in flight per session at a time. */
async function callBatch(n: number, sessions: readonly BenchSession[], tool: string): Promise<Tally> {
  const latencies: number[] = new Array(n);
  let next = 0;
  let errors = 0;
  const worker = async (session: BenchSession) => {
    for (let i = next++; i < n; i = next++) {
      const message = `bench message ${i}`;
      const started = performance.now();
      try {
        if ((await session.echo(tool, message)) !== `Echo: ${message}`) errors++;
      } catch {
        errors++;
      }
      latencies[i] = performance.now() - started;
    }
  };
  const started = performance.now();
  await Promise.all(sessions.map(worker));
  return { calls: n, latencies, elapsedMs: performance.now() - started, errors };
}

function emptyTally(): Tally {
  return { calls: 0, latencies: [], elapsedMs: 0, errors: 0 };
}

function addTo(tally: Tally, batch: Tally): void {
  tally.calls += batch.calls;
  tally.latencies.push(...batch.latencies);
  tally.elapsedMs += batch.elapsedMs;
  tally.errors += batch.errors;
}

function summarize(tally: Tally): Measured {
  const sorted = [...tally.latencies].sort((a, b) => a - b);
  return {
    calls: sorted.length,
    callsPerSecond: (sorted.length / tally.elapsedMs) * 1000,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    errors: tally.errors,
  };
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

// ── standalone ───────────────────────────────────────────────────────────────────────────────

if (isEntryModule(import.meta.url)) {
  const guard = setTimeout(async () => {
    console.error(
      `the gateway benchmark did not finish within ${GUARD_MS / 1000} s; cleaning up and exiting`,
    );
    const bounded = new Promise((resolve) => setTimeout(resolve, 10_000).unref());
    const cleaning = (async () => {
      for (const cleanup of pendingCleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
    })();
    await Promise.race([cleaning, bounded]);
    process.exit(1);
  }, GUARD_MS);
  guard.unref();
  runGatewayBench().then(
    (tables) => {
      clearTimeout(guard);
      console.log(formatResult(tables));
    },
    (err: unknown) => {
      clearTimeout(guard);
      console.error(err);
      process.exitCode = 1;
    },
  );
}

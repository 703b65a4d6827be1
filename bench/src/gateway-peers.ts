/**
 * The gateway benchmark (issue 7): 1,000 `echo` calls to server-everything through three MCP
 * edges over streamable HTTP, each its own process: the toolbus gateway (with the catalog and
 * the dispatcher as child processes, the tool in approval mode `approve`), `supergateway`
 * (stdio → stateful streamable HTTP; it starts one server per session) and `mcp-proxy`
 * (stdio → streamable HTTP; one server for all sessions). One harness for all three: the MCP
 * SDK Client over StreamableHTTPClientTransport, one session per concurrent worker, each
 * listing tools first; 100 warm-up calls, then 1,000 measured in rounds of 100 that take turns
 * between the edges, at concurrency 1 and 16. Rows: calls/s, p50, p99 (nearest rank), and
 * toolbus ÷ peer on the peers' rows. Aim (issue 7): toolbus at least 2 × the better peer's
 * calls/s at concurrency 16. When the budget runs out, the rows say how many calls they hold.
 *
 * Standalone: `node --conditions=@toolbus/source --import tsx bench/src/gateway-peers.ts`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { connect } from "@nats-io/transport-node";
import {
  approvalPolicyOf,
  cleanupJetStream,
  freePort,
  isolation,
  publishApprovalPolicy,
} from "@toolbus/testkit";
import { serverEverythingCommand } from "@toolbus/testkit/mcp-test-server";
import { type BenchRow, formatTable, isEntryModule, percentile } from "./bench-table.js";

const CALLS = 1_000;
const WARMUP_CALLS = 100;
/** The calls of an edge are made in rounds of this many, taking turns with the other edges. */
const ROUND_CALLS = 100;
const CONCURRENCIES = [1, 16] as const;
const CALL_TIMEOUT_MS = 10_000;
/** initialize and tools/list: supergateway starts a server per session, slow on a busy machine. */
const SESSION_TIMEOUT_MS = 60_000;
/** Three services compiled from source and their server, on a busy machine. */
const STARTUP_TIMEOUT_MS = 90_000;
/** No call starts later than this after start-up; the guard adds start-up and clean-up time. */
const BUDGET_MS = 120_000;
const GUARD_MS = 240_000;
const AIM = 2;
const AIM_CONCURRENCY = 16;
/** Toolbus first: the peers' rows compare against it. */
const EDGES = ["toolbus", "supergateway", "mcp-proxy"] as const;

/** An MCP edge in front of server-everything, and the name `echo` has behind it. */
interface Edge {
  name: (typeof EDGES)[number];
  url: string;
  tool: string;
}

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

export async function runGatewayBench(): Promise<BenchRow[]> {
  const natsUrl = process.env.NATS_URL || "nats://127.0.0.1:4222";
  const { prefix } = isolation("bench_gateway");
  const cleanups = pendingCleanups;
  const dir = mkdtempSync(join(tmpdir(), "toolbus-bench-gateway-"));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => cleanupJetStream(natsUrl, prefix));
  try {
    // Settled, not raced: an edge still starting after another failed would outlive the clean-up.
    const starting = await Promise.allSettled([
      startToolbus({ natsUrl, prefix, dir, cleanups }),
      startSupergateway(cleanups),
      startMcpProxy(cleanups),
    ]);
    const edges = starting.map((outcome) => {
      if (outcome.status === "rejected") throw outcome.reason;
      return outcome.value;
    });
    const deadline = Date.now() + BUDGET_MS;
    const results = new Map<string, Measured | Error>();
    for (const [index, concurrency] of CONCURRENCIES.entries()) {
      // Each concurrency gets an even share of what is left, so a slow machine still measures both.
      const share = Date.now() + (deadline - Date.now()) / (CONCURRENCIES.length - index);
      for (const [name, measured] of await runRounds(edges, concurrency, share)) {
        results.set(`${name} ${concurrency}`, measured);
      }
    }
    return CONCURRENCIES.flatMap((concurrency) => rowsAt(concurrency, results));
  } finally {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  }
}

function rowsAt(concurrency: number, results: ReadonlyMap<string, Measured | Error>): BenchRow[] {
  const at = (name: string): Measured | undefined => {
    const result = results.get(`${name} ${concurrency}`);
    return result instanceof Error || result === undefined || result.calls === 0 ? undefined : result;
  };
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
      name: `${name} c=${concurrency}`,
      concurrency,
      calls: measured.calls,
      "calls/s": round(measured.callsPerSecond, 0),
      "p50 ms": round(measured.p50, 3),
      "p99 ms": round(measured.p99, 3),
      "toolbus ÷ peer calls/s": vs((toolbus?.callsPerSecond ?? 0) / measured.callsPerSecond),
      "toolbus ÷ peer p50": vs((toolbus?.p50 ?? 0) / measured.p50),
      errors: measured.errors,
      note: measured.calls < CALLS ? `budget of ${BUDGET_MS / 1000} s reached` : "",
    };
  };
  const rows = EDGES.map(row);
  const peers = EDGES.slice(1).flatMap((name) => at(name)?.callsPerSecond ?? []);
  if (concurrency === AIM_CONCURRENCY && toolbus && peers.length > 0) {
    const ratio = toolbus.callsPerSecond / Math.max(...peers);
    rows.push({
      name: `aim c=${AIM_CONCURRENCY}: toolbus ≥ ${AIM} × better peer`,
      "toolbus ÷ peer calls/s": round(ratio, 2),
      note: ratio >= AIM ? "met" : "not met",
    });
  }
  return rows;
}

/** The calls of one edge at one concurrency, gathered over the rounds. */
interface Tally {
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
): Promise<Map<string, Measured | Error>> {
  const outcome = new Map<string, Measured | Error>();
  const open = new Map<Edge, Client[]>();
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
    const tallies = new Map(
      running.map((edge) => [edge, { latencies: [], elapsedMs: 0, errors: 0 } as Tally]),
    );
    for (let round = 0; round < CALLS / ROUND_CALLS && Date.now() < deadline; round++) {
      for (let turn = 0; turn < running.length; turn++) {
        const edge = running[(round + turn) % running.length]!;
        const tally = tallies.get(edge)!;
        const batch = await callBatch(ROUND_CALLS, open.get(edge)!, edge.tool);
        tally.latencies.push(...batch.latencies);
        tally.elapsedMs += batch.elapsedMs;
        tally.errors += batch.errors;
      }
    }
    for (const [edge, tally] of tallies) outcome.set(edge.name, summarize(tally));
    return outcome;
  } finally {
    await Promise.all([...open.values()].flat().map(closeSession));
  }
}

/** `concurrency` sessions, all or none. */
async function openSessions(edge: Edge, concurrency: number): Promise<Client[]> {
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
async function callBatch(n: number, sessions: readonly Client[], tool: string): Promise<Tally> {
  const latencies: number[] = new Array(n);
  let next = 0;
  let errors = 0;
  const worker = async (client: Client) => {
    for (let i = next++; i < n; i = next++) {
      const message = `bench message ${i}`;
      const started = performance.now();
      try {
        const result = await client.callTool({ name: tool, arguments: { message } }, undefined, {
          timeout: CALL_TIMEOUT_MS,
        });
        const [block] = result.content as Array<{ text?: string }>;
        if (block?.text !== `Echo: ${message}`) errors++;
      } catch {
        errors++;
      }
      latencies[i] = performance.now() - started;
    }
  };
  const started = performance.now();
  await Promise.all(sessions.map(worker));
  return { latencies, elapsedMs: performance.now() - started, errors };
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

/** A new MCP session that has listed the tools, as a client does before calling. */
async function openSession(edge: Edge): Promise<Client> {
  const client = new Client({ name: "toolbus-gateway-bench", version: "0.1.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(edge.url)), { timeout: SESSION_TIMEOUT_MS });
  const { tools } = await client.listTools(undefined, { timeout: SESSION_TIMEOUT_MS });
  if (!tools.some((tool) => tool.name === edge.tool)) {
    await closeSession(client);
    throw new Error(
      `${edge.name} does not list ${edge.tool}; it lists ${tools.map((t) => t.name).join(", ")}`,
    );
  }
  return client;
}

/** DELETE the session (supergateway stops that session's server), then close the client. */
async function closeSession(client: Client): Promise<void> {
  const transport = client.transport as StreamableHTTPClientTransport | undefined;
  await transport?.terminateSession().catch(() => undefined);
  await client.close().catch(() => undefined);
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

// ── the three edges ──────────────────────────────────────────────────────────────────────────

/** The catalog, the dispatcher and the gateway, each its own process from source. */
async function startToolbus(deps: {
  natsUrl: string;
  prefix: string;
  dir: string;
  cleanups: Array<() => Promise<unknown>>;
}): Promise<Edge> {
  const port = await freePort();
  const configPath = join(deps.dir, "toolbus.toml");
  const everything = serverEverythingCommand();
  writeFileSync(
    configPath,
    [
      "[gateway]",
      `port = ${port}`,
      "",
      "[mcp_servers.everything]",
      `command = ${JSON.stringify(everything.command)}`,
      `args = ${JSON.stringify(everything.args)}`,
      'default_tools_approval_mode = "approve"',
      "",
    ].join("\n"),
  );
  // No approvals service here: the policy it would publish is stood in for (mode `approve` needs nobody).
  const nc = await connect({ servers: deps.natsUrl });
  await publishApprovalPolicy(nc, deps.prefix, await approvalPolicyOf(configPath));
  await nc.close();
  const env = { NATS_URL: deps.natsUrl, TOOLBUS_PREFIX: deps.prefix, LOG_LEVEL: "warn" };
  for (const service of ["catalog", "dispatcher", "gateway"] as const) {
    const main = join(repoRoot(), "services", service, "src", "main.ts");
    const child = startChild(
      `toolbus ${service}`,
      ["--conditions=@toolbus/source", "--import", "tsx", main, "--config", configPath],
      env,
    );
    deps.cleanups.push(() => child.stop());
  }
  const edge: Edge = { name: "toolbus", url: `http://127.0.0.1:${port}/mcp`, tool: "everything__echo" };
  await untilServing(edge);
  return edge;
}

/** supergateway: stdio → stateful streamable HTTP (it starts one server per session). */
async function startSupergateway(cleanups: Array<() => Promise<unknown>>): Promise<Edge> {
  const port = await freePort();
  const everything = serverEverythingCommand();
  const stdio = [everything.command, ...everything.args].map(shellQuote).join(" ");
  const child = startChild("supergateway", [
    peerBin("supergateway", "supergateway"),
    ...["--stdio", stdio, "--outputTransport", "streamableHttp", "--stateful"],
    ...["--port", String(port), "--streamableHttpPath", "/mcp", "--logLevel", "none"],
  ]);
  cleanups.push(() => child.stop());
  const edge: Edge = { name: "supergateway", url: `http://127.0.0.1:${port}/mcp`, tool: "echo" };
  await untilServing(edge);
  return edge;
}

/** mcp-proxy: one stdio server behind a streamable HTTP endpoint with sessions. */
async function startMcpProxy(cleanups: Array<() => Promise<unknown>>): Promise<Edge> {
  const port = await freePort();
  const everything = serverEverythingCommand();
  const child = startChild("mcp-proxy", [
    peerBin("mcp-proxy", "mcp-proxy"),
    ...["--server", "stream", "--host", "127.0.0.1", "--port", String(port), "--streamEndpoint", "/mcp"],
    "--",
    everything.command,
    ...everything.args,
  ]);
  cleanups.push(() => child.stop());
  const edge: Edge = { name: "mcp-proxy", url: `http://127.0.0.1:${port}/mcp`, tool: "echo" };
  await untilServing(edge);
  return edge;
}

/** Until a session can list `echo` and call it once. */
async function untilServing(edge: Edge): Promise<void> {
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  for (;;) {
    try {
      const client = await openSession(edge);
      try {
        await client.callTool({ name: edge.tool, arguments: { message: "ready?" } }, undefined, {
          timeout: CALL_TIMEOUT_MS,
        });
        return;
      } finally {
        await closeSession(client);
      }
    } catch (error) {
      if (Date.now() > deadline) {
        throw new Error(
          `${edge.name} did not serve echo within ${STARTUP_TIMEOUT_MS} ms: ${(error as Error).message}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** The bin script of a peer gateway, from the bench's own dependencies or the gateway's dev ones. */
function peerBin(pkg: string, bin: string): string {
  for (const from of ["bench/package.json", "services/gateway/package.json"]) {
    try {
      const manifestPath = createRequire(join(repoRoot(), from)).resolve(`${pkg}/package.json`);
      const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as { bin: Record<string, string> };
      return join(dirname(manifestPath), manifest.bin[bin]!);
    } catch {
      // not a dependency there
    }
  }
  throw new Error(`${pkg} is not installed; it is a dev dependency of services/gateway`);
}

// ── child processes ──────────────────────────────────────────────────────────────────────────

interface Child {
  stop(): Promise<void>;
}

/** A node process that never outlives the benchmark, nor do the processes it starts. */
function startChild(label: string, args: string[], env: Record<string, string> = {}): Child {
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: repoRoot(),
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  let stopping = false;
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-4_000);
  });
  child.once("exit", (code, signal) => {
    if (!stopping && code !== 0) console.error(`${label} exited (${code ?? signal}): ${stderr.trim()}`);
  });
  const killAll = () => {
    for (const pid of [...descendants(child.pid), child.pid]) signal(pid, "SIGKILL");
  };
  process.once("exit", killAll);
  return {
    async stop() {
      stopping = true;
      if (child.exitCode === null && child.signalCode === null) {
        // Taken before the parent goes: supergateway puts each session's server in its own group.
        const offspring = descendants(child.pid);
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        const killer = setTimeout(() => child.kill("SIGKILL"), 5_000);
        await exited;
        clearTimeout(killer);
        await new Promise((resolve) => setTimeout(resolve, 200));
        for (const pid of offspring) signal(pid, "SIGKILL");
      }
      process.off("exit", killAll);
    },
  };
}

/** Every process below `root`, from /proc (children before their own children). */
function descendants(root: number | undefined): number[] {
  if (root === undefined) return [];
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // "pid (comm) state ppid …"; comm may hold spaces and parentheses, so split after the last ")".
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parentOf.set(Number(entry), ppid);
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    for (const [pid, ppid] of parentOf) {
      if (ppid === parent) {
        found.push(pid);
        queue.push(pid);
      }
    }
  }
  return found;
}

function signal(pid: number | undefined, name: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The checkout: this file sits in bench/src. */
function repoRoot(): string {
  return fileURLToPath(new URL("../../", import.meta.url));
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

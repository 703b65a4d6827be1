/**
 * The dispatch benchmark (issue 4): 2,000 `echo` calls to server-everything, direct (an MCP SDK
 * client over stdio) and through `<prefix>.dispatch.call` (the catalog and the dispatcher as
 * child processes built from source, tools in approval mode `approve` so nobody is asked), at
 * concurrency 1 and 32: calls/s, p50 and p99 latency (hdr-histogram-js), and bus ÷ direct for each
 * in the same run.
 * Aims (issue 4): p50 added latency at concurrency 1 under 1 ms; throughput at concurrency 32 at
 * least 0.7 × direct.
 * The bus path runs twice, each on a nats-server of its own started here, provisioned first: one
 * open, one enforcing the identities and accounts of `toolbus nats-config` (catalog, the
 * `everything` connector, dispatcher and the caller, as `agent`, each with its NKey, provisioned
 * by the provisioner). `auth ÷ open` is the cost of authentication per call (issue 12).
 * A second table gives the CPU per call of every process on each path, read from /proc before and
 * after each measured batch: the dispatcher and the catalog run as processes of their own, the
 * caller is this process. Aims (issue 14): dispatcher ≤ 150 µs, catalog connector ≤ 150 µs.
 *
 * Standalone, after `pnpm build`: `node --conditions=@toolbus/source --import tsx bench/src/dispatch-call.ts`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { connect, type NatsConnection, nkeyAuthenticator } from "@nats-io/transport-node";
import {
  connectBus,
  createLogger,
  type NatsAccess,
  type NatsIdentities,
  provisionBus,
  readSeedFile,
  writeNatsIdentities,
} from "@toolbus/bus";
import { parseToolbusToml, provisionInputs } from "@toolbus/config";
import {
  APPROVAL_POLICY_KEY,
  createSubjects,
  type Identity,
  identityOf,
  inboxPrefix,
  internalSubjects,
  LOCAL_JS_API,
  type Subjects,
} from "@toolbus/protocol";
import {
  approvalPolicyOf,
  isolation,
  type NatsServerProcess,
  startNatsServer,
  toolbusToml,
} from "@toolbus/testkit";
import { serverEverythingCommand } from "@toolbus/testkit/mcp-test-server";
import * as hdr from "hdr-histogram-js";
import { type BenchRow, type BenchTable, formatResult, isEntryModule } from "./bench-table.js";
import { CPU_AIM_MICROS, CpuPerCall, type Watched } from "./cpu-per-call.js";
import { profileFlags, profileTables } from "./cpu-profile.js";
import { clockTicksPerSecond, descendantsIn, procAvailable } from "./process-usage.js";

const CALLS = 2_000;
const WARMUP_CALLS = 200;
const CONCURRENCIES = [1, 32] as const;
const CALL_TIMEOUT_MS = 10_000;
/** After the warm-up, each process's CPU with no calls is measured over this long. */
const IDLE_MS = 3_000;
const STARTUP_TIMEOUT_MS = 90_000;
/** The whole run, start-up included, ends within this when run alone. */
const GUARD_MS = 240_000;

/** One way of making an echo call; resolves when the answer is the expected echo. */
type Caller = (message: string) => Promise<void>;

/** A way of calling and the processes it runs on (named for the CPU table). */
interface Path {
  call: Caller;
  watched: Watched[];
}

interface Measured {
  calls: number;
  callsPerSecond: number;
  p50: number;
  p99: number;
  errors: number;
}

export async function runDispatchBench(): Promise<BenchTable[]> {
  if (!procAvailable()) throw new Error("the dispatch benchmark reads CPU from /proc: Linux only");
  const { prefix } = isolation("bench_dispatch");
  const subjects = createSubjects(prefix);
  const cleanups: Array<() => Promise<unknown>> = [];
  const tables: BenchTable[] = [];
  try {
    const direct = await directCaller();
    cleanups.push(direct.close);
    const dir = mkdtempSync(join(tmpdir(), "toolbus-bench-ids-"));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const identities = writeNatsIdentities({ dir, prefix, servers: ["everything"] });
    const open = await startNatsServer();
    cleanups.push(() => open.stop());
    const secured = await startNatsServer({ config: readFileSync(identities.authConf, "utf8") });
    cleanups.push(() => secured.stop());
    const bus = await busCaller({ path: "dispatch.call", nats: open, prefix, subjects, cleanups });
    const authed = await busCaller({
      path: "dispatch.call, authenticated",
      nats: secured,
      prefix,
      subjects,
      cleanups,
      identities,
    });

    await measure(WARMUP_CALLS, 8, direct.call);
    await measure(WARMUP_CALLS, 8, bus.call);
    await measure(WARMUP_CALLS, 8, authed.call);
    const cpu = new CpuPerCall();
    await cpu.idle([...direct.watched, ...bus.watched, ...authed.watched], IDLE_MS);
    const measured = (concurrency: number, path: Path) =>
      cpu.around(path.watched, `c=${concurrency}`, () => measure(CALLS, concurrency, path.call));
    const rows: BenchRow[] = [];
    for (const concurrency of CONCURRENCIES) {
      const viaDirect = await measured(concurrency, direct);
      const viaBus = await measured(concurrency, bus);
      const viaAuthed = await measured(concurrency, authed);
      rows.push(
        row(`direct c=${concurrency}`, concurrency, viaDirect),
        row(`dispatch.call c=${concurrency}`, concurrency, viaBus),
        row(`dispatch.call, authenticated c=${concurrency}`, concurrency, viaAuthed),
        ratio(`bus ÷ direct c=${concurrency}`, concurrency, viaBus, viaDirect),
        ratio(`auth ÷ open c=${concurrency}`, concurrency, viaAuthed, viaBus),
      );
    }
    if (secured.violations().length > 0) {
      throw new Error(`the authenticated bus refused something: ${secured.violations().join("; ")}`);
    }
    tables.push(
      { title: "echo calls, direct and through the bus", rows },
      {
        title: `CPU per call of each process, from /proc over each path's own batches (one tick is ${1000 / clockTicksPerSecond()} ms); "of it idle": what the process spends with no calls (${IDLE_MS / 1000} s measured before the calls) over the batches' time`,
        rows: cpu.rows(),
      },
    );
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  }
  // The services wrote their profiles when they stopped.
  return [...tables, ...profileTables()];
}

/** `measured` relative to `base`: ratios, and the p50 it adds in ms. */
function ratio(name: string, concurrency: number, measured: Measured, base: Measured): BenchRow {
  return {
    name,
    concurrency,
    calls: CALLS,
    "calls/s": round(measured.callsPerSecond / base.callsPerSecond, 3),
    "p50 ms": round(measured.p50 / base.p50, 3),
    "p99 ms": round(measured.p99 / base.p99, 3),
    "added p50 ms": round(measured.p50 - base.p50, 3),
    errors: measured.errors + base.errors,
  };
}

function row(name: string, concurrency: number, measured: Measured): BenchRow {
  return {
    name,
    concurrency,
    calls: CALLS,
    "calls/s": round(measured.callsPerSecond, 0),
    "p50 ms": round(measured.p50, 3),
    "p99 ms": round(measured.p99, 3),
    "added p50 ms": "",
    errors: measured.errors,
  };
}

/** `n` calls, `concurrency` at a time; latency per call (HDR histogram in µs), throughput over the batch. */
async function measure(n: number, concurrency: number, call: Caller): Promise<Measured> {
  const histogram = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: CALL_TIMEOUT_MS * 1000,
    numberOfSignificantValueDigits: 3,
  });
  let next = 0;
  let errors = 0;
  const worker = async () => {
    for (let i = next++; i < n; i = next++) {
      const started = performance.now();
      try {
        await call(`bench message ${i}`);
      } catch {
        errors++;
      }
      histogram.recordValue(Math.max(1, Math.round((performance.now() - started) * 1000)));
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsedMs = performance.now() - started;
  const measured = {
    calls: n,
    callsPerSecond: (n / elapsedMs) * 1000,
    p50: histogram.getValueAtPercentile(50) / 1000,
    p99: histogram.getValueAtPercentile(99) / 1000,
    errors,
  };
  histogram.destroy();
  return measured;
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** The MCP SDK client over stdio, straight to server-everything. */
async function directCaller(): Promise<Path & { close: () => Promise<void> }> {
  const { command, args } = serverEverythingCommand();
  const client = new Client({ name: "toolbus-bench", version: "0.1.0" });
  const transport = new StdioClientTransport({ command, args, stderr: "ignore" });
  await client.connect(transport);
  const server = transport.pid ?? undefined;
  return {
    watched: [
      callerWatched("direct"),
      { edge: "direct", process: "server-everything", pids: () => one(server), note: "this process's child" },
    ],
    call: async (message) => {
      const result = await client.callTool({ name: "echo", arguments: { message } }, undefined, {
        timeout: CALL_TIMEOUT_MS,
      });
      const [block] = result.content as Array<{ type: string; text?: string }>;
      if (block?.text !== `Echo: ${message}`) throw new Error(`unexpected echo: ${JSON.stringify(result)}`);
    },
    close: () => client.close(),
  };
}

/** The catalog and the dispatcher as their own processes; calls as a model runtime sends them. */
async function busCaller(deps: {
  /** Its name in the CPU table. */
  path: string;
  nats: NatsServerProcess;
  prefix: string;
  subjects: Subjects;
  cleanups: Array<() => Promise<unknown>>;
  /** Each process connects with its own identity (the caller as `agent`); none: an open bus. */
  identities?: NatsIdentities;
}): Promise<Path> {
  const { path, prefix, subjects, cleanups, identities } = deps;
  const natsUrl = deps.nats.url;
  const dir = mkdtempSync(join(tmpdir(), "toolbus-bench-dispatch-"));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  const configPath = join(dir, "toolbus.toml");
  const everything = serverEverythingCommand();
  writeFileSync(
    configPath,
    toolbusToml({
      servers: {
        everything: {
          command: everything.command,
          args: everything.args,
          default_tools_approval_mode: "approve",
        },
      },
    }),
  );
  const nc = await connect({
    servers: natsUrl,
    ...(identities
      ? {
          authenticator: nkeyAuthenticator(
            new TextEncoder().encode(readFileSync(identities.seedFile("agent"), "utf8").trim()),
          ),
          inboxPrefix: inboxPrefix(prefix, "agent"),
        }
      : {}),
  });
  cleanups.push(() => nc.close());
  const seed = (role: "catalog" | "dispatcher") => (identities ? identities.seedFile(role) : undefined);
  /** How `identity` connects: with its own seed, inbox and JetStream API prefix on the enforcing bus. */
  const accessOf = (identity: Identity): NatsAccess =>
    identities
      ? {
          servers: [natsUrl],
          nkeySeed: readSeedFile(identities.seedFile(identity)),
          inboxPrefix: inboxPrefix(prefix, identity),
          ...(identity.role === "provisioner" ? {} : { jsApiPrefix: LOCAL_JS_API }),
        }
      : { servers: [natsUrl] };
  // Before any service, as `toolbus provision` runs: the assets, sized by the config's tables.
  const config = parseToolbusToml(readFileSync(configPath, "utf8"), { path: configPath });
  await provisionBus({
    access: accessOf(identityOf("provisioner")),
    subjects,
    settings: { ...provisionInputs(config, {}), replicas: 1 },
  });
  // No approvals service here: the policy it would publish is put as approvals (the one identity that may).
  const publisher = await connectBus({
    access: accessOf(identityOf("approvals")),
    service: { name: "approvals", version: "bench" },
    logger: createLogger({ service: "approvals", version: "bench", level: "silent" }),
  });
  const policy = await approvalPolicyOf(configPath);
  await (await publisher.kv(internalSubjects(prefix).kv.approvalPolicy)).put(
    APPROVAL_POLICY_KEY,
    JSON.stringify(policy),
  );
  await publisher.close();

  const label = identities ? "authenticated" : "open";
  const start = (service: "catalog" | "dispatcher") =>
    startService(service, {
      natsUrl,
      prefix,
      configPath,
      nkeyFile: seed(service),
      profileName: `${service}-${label}`,
    });
  const catalog = start("catalog");
  cleanups.push(() => stopChild(catalog));
  await until("the catalog to list server-everything", () => everythingReady(nc, subjects));
  const dispatcher = start("dispatcher");
  cleanups.push(() => stopChild(dispatcher));

  let callId = 0;
  const call: Caller = async (message) => {
    callId++;
    const request = {
      callId: `bench-${callId}`,
      tool: "mcp__everything__echo",
      arguments: JSON.stringify({ message }),
    };
    const reply = await nc.request(subjects.dispatchCall, JSON.stringify(request), {
      timeout: CALL_TIMEOUT_MS,
    });
    const envelope = reply.json<{
      ok: boolean;
      result?: { status: string; result?: { content: unknown[] } };
    }>();
    const [block] = (envelope.result?.result?.content ?? []) as Array<{ text?: string }>;
    if (envelope.result?.status !== "completed" || block?.text !== `Echo: ${message}`) {
      throw new Error(`unexpected reply: ${reply.string().slice(0, 500)}`);
    }
  };
  await until("the dispatcher to serve a call", async () => {
    try {
      await call("ready?");
      return true;
    } catch {
      return undefined;
    }
  });
  const watched: Watched[] = [
    callerWatched(path),
    {
      edge: path,
      process: "dispatcher",
      pids: () => one(dispatcher.pid),
      cpuAimMicros: CPU_AIM_MICROS.dispatcher,
      note: "a process of its own, not this one",
    },
    {
      edge: path,
      process: "catalog connector",
      pids: () => one(catalog.pid),
      cpuAimMicros: CPU_AIM_MICROS.catalog,
      note: "a process of its own",
    },
    {
      edge: path,
      process: "server-everything",
      pids: (table) => (catalog.pid === undefined ? [] : descendantsIn(table, catalog.pid)),
      note: "the catalog's child",
    },
    {
      edge: path,
      process: "nats-server",
      pids: () => one(deps.nats.pid),
      note: "its own, for this path only",
    },
  ];
  return { call, watched };
}

/** This process, which makes the calls (and, on the direct path, is the MCP client). */
function callerWatched(path: string): Watched {
  return { edge: path, process: "the bench (caller)", pids: () => [process.pid], note: "this process" };
}

function one(pid: number | undefined): number[] {
  return pid === undefined ? [] : [pid];
}

function startService(
  service: "catalog" | "dispatcher",
  options: {
    natsUrl: string;
    prefix: string;
    configPath: string;
    nkeyFile: string | undefined;
    profileName: string;
  },
): ChildProcess {
  // As deployed (the image runs dist/main.js): `pnpm bench` builds first.
  const main = join(repoRoot(), "services", service, "dist", "main.js");
  const child = spawn(
    process.execPath,
    [...profileFlags(options.profileName), main, "--config", options.configPath],
    {
      cwd: repoRoot(),
      env: {
        ...process.env,
        NATS_URL: options.natsUrl,
        NATS_NKEY_FILE: options.nkeyFile,
        TOOLBUS_PREFIX: options.prefix,
        LOG_LEVEL: "warn",
      },
      stdio: ["ignore", "ignore", "inherit"],
    },
  );
  // Never outlive the benchmark, even when its guard makes it exit early.
  const kill = () => child.kill("SIGKILL");
  process.once("exit", kill);
  child.once("exit", () => process.off("exit", kill));
  return child;
}

/** The checkout: services sit two levels above this file (bench/src). */
function repoRoot(): string {
  return fileURLToPath(new URL("../../", import.meta.url));
}

async function everythingReady(nc: NatsConnection, subjects: Subjects): Promise<true | undefined> {
  try {
    const reply = await nc.request(subjects.catalogGet, JSON.stringify({ exposure: "all" }), {
      timeout: 2_000,
    });
    const envelope = reply.json<{
      ok: boolean;
      result?: { servers: Array<{ name: string; status: string }> };
    }>();
    return envelope.result?.servers.some((s) => s.name === "everything" && s.status === "ready")
      ? true
      : undefined;
  } catch {
    return undefined;
  }
}

async function until(what: string, check: () => Promise<true | undefined>): Promise<void> {
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while ((await check()) === undefined) {
    if (Date.now() > deadline)
      throw new Error(`timed out after ${STARTUP_TIMEOUT_MS} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** SIGTERM, then SIGKILL after 5 s. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const killer = setTimeout(() => child.kill("SIGKILL"), 5_000);
  await exited;
  clearTimeout(killer);
}

if (isEntryModule(import.meta.url)) {
  const guard = setTimeout(() => {
    console.error(`the dispatch benchmark did not finish within ${GUARD_MS / 1000} s; exiting`);
    process.exit(1);
  }, GUARD_MS);
  guard.unref();
  runDispatchBench().then(
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

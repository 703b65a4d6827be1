/**
 * The chaos scenarios of issue 16, each a fault injected into a running cluster under a steady
 * load, ending with the client's view set against the server's executions and the events stream.
 * `runChaos` runs them one after another on one cluster (restoring what each took away) and
 * returns one row per scenario; the CI test asserts on the rows, `pnpm bench chaos` prints them.
 */
import { jetstream } from "@nats-io/jetstream";
import { createSubjects } from "@toolbus/protocol";
import type { ToolbusCluster } from "@toolbus/testkit/cluster";
import pg from "pg";
import {
  type CallEventCounts,
  callEvents,
  type LoadResult,
  runLoad,
  type ScenarioRow,
  tally,
} from "./load.js";
import { LONG_MS, runTaskScenario } from "./tasks.js";

export interface ChaosSettings {
  /** Calls per second, and for how long each scenario's load runs. */
  rate: number;
  durationMs: number;
  /** When, into the load, the fault strikes. */
  faultAtMs: number;
  /** How many approvals are pending when an approvals replica dies. */
  pendingApprovals: number;
}

/** CI: short and light. `pnpm bench chaos`: the issue's 100+ calls/s for 30 s and 100 approvals. */
export const CI_SETTINGS: ChaosSettings = {
  rate: 10,
  durationMs: 8_000,
  faultAtMs: 3_000,
  pendingApprovals: 10,
};
export const BENCH_SETTINGS: ChaosSettings = {
  rate: 100,
  durationMs: 30_000,
  faultAtMs: 10_000,
  pendingApprovals: 100,
};

/** How long the test server's `work` tool takes. */
const WORK_MS = 200;

/** The test server's tools: `work` takes a moment, so calls are in flight when a fault strikes. */
export const CHAOS_SCRIPT = {
  tools: [
    { name: "work", behavior: { kind: "delay" as const, ms: WORK_MS } },
    { name: "guarded", behavior: { kind: "echo" as const } },
    // Runs past the point where a call of a client that takes tasks becomes one.
    { name: "long", behavior: { kind: "delay" as const, ms: LONG_MS } },
  ],
};

/** toolbus.toml additions: `guarded` is put to an approver. */
export const CHAOS_TOML = {
  mcp_servers: { test: { tools: { guarded: { approval_mode: "prompt" } } } },
};

interface Fault {
  name: string;
  inject(cluster: ToolbusCluster): Promise<void>;
  restore(cluster: ToolbusCluster): Promise<void>;
}

const FAULTS: readonly Fault[] = [
  {
    name: "kill -9 a dispatcher",
    inject: (c) => c.services.dispatcher[0]!.kill(),
    restore: (c) => c.services.dispatcher[0]!.restart(),
  },
  {
    name: "kill -9 a catalog replica of the server called",
    inject: (c) => c.services.catalog[0]!.kill(),
    restore: (c) => c.services.catalog[0]!.restart(),
  },
  {
    name: "kill -9 a gateway",
    inject: (c) => c.services.gateway[0]!.kill(),
    restore: (c) => c.services.gateway[0]!.restart(),
  },
  {
    name: "kill -9 a NATS node, restart it 5 s later",
    inject: async (c) => {
      await c.nats[1]!.kill();
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      await c.nats[1]!.restart();
    },
    restore: async () => {},
  },
];

/** Every load scenario's row, in order, on one running cluster. */
export async function runChaos(cluster: ToolbusCluster, settings: ChaosSettings): Promise<ScenarioRow[]> {
  const subjects = createSubjects(cluster.prefix);
  const gateways = cluster.services.gateway.map((g) => g.url as string);
  const tool = await flatName(gateways[0] as string, "test", "work");
  const admin = await cluster.adminConnection();
  const rows: ScenarioRow[] = [];
  for (const fault of [undefined, ...FAULTS]) {
    const load = await runLoad({
      gateways,
      tool,
      rate: settings.rate,
      durationMs: settings.durationMs,
      attemptTimeoutMs: 10_000,
      // Generous: CI runs this beside the rest of the suite on 2 cores.
      giveUpMs: 120_000,
      maxInFlight: 64,
      ...(fault ? { fault: { atMs: settings.faultAtMs, inject: () => fault.inject(cluster) } } : {}),
    });
    if (fault) await fault.restore(cluster);
    const lines = await cluster.executions();
    const executions = lines
      .map((line) => (line._meta as { callId?: string } | undefined)?.callId)
      .filter((callId): callId is string => callId !== undefined);
    const events = await eventuallyComplete(admin, subjects.streams.events.name, cluster.prefix, executions);
    const row = tally(fault?.name ?? "no fault (baseline)", load, executions, events);
    // Without a fault, how long a call's end event is not yet durable after the server answered.
    rows.push(fault ? withRenewals(row, cluster) : { ...row, note: eventWindow(lines, events, load) });
  }
  rows.push(await runTaskScenario(cluster, settings));
  rows.push(
    await runApprovalsScenario(
      cluster,
      settings,
      "kill -9 an approvals replica with approvals pending",
      async (c) => {
        await c.services.approvals[0]!.kill();
      },
    ),
  );
  await cluster.services.approvals[0]!.restart();
  // Memory messages flow while Postgres restarts: each is counted once, none lost.
  const memory = await memoryFlow(cluster, settings.pendingApprovals);
  const restarted = await runApprovalsScenario(
    cluster,
    settings,
    "restart Postgres with approvals pending",
    async (c) => {
      await memory.publishSome();
      await c.postgres.stop();
      await memory.publishSome();
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      await c.postgres.start();
      await memory.publishSome();
    },
  );
  const counted = await memory.countedAfterRecovery();
  rows.push({
    ...restarted,
    note: `memory: ${counted.counted} of ${counted.published} messages counted once`,
  });
  memoryCounts = counted;
  return rows;
}

/** The memory messages of the last Postgres restart: published, and counted once recovered. */
export let memoryCounts: { published: number; counted: number } | undefined;

/**
 * An agent publishing memory messages that each cite one rollout; the usage count the memory
 * service keeps for it must end equal to the messages published (each counted once).
 */
async function memoryFlow(cluster: ToolbusCluster, perBurst: number) {
  const subjects = createSubjects(cluster.prefix);
  const rollout = "019c6e27-e55b-73d1-87d8-4e01f1f75099";
  const db = new pg.Client({ connectionString: cluster.postgres.url });
  await db.connect();
  await db.query(
    `INSERT INTO stage1_outputs (thread_id, source_updated_at, raw_memory, rollout_summary, generated_at)
     VALUES ($1, 1, 'raw', 'summary', 1)`,
    [rollout],
  );
  await db.end();
  const agent = await cluster.agentConnection();
  const js = jetstream(agent);
  let published = 0;
  const text = [
    "done",
    "<oai-mem-citation>",
    "<citation_entries>",
    "MEMORY.md:1-2|note=[x]",
    "</citation_entries>",
    "<rollout_ids>",
    rollout,
    "</rollout_ids>",
    "</oai-mem-citation>",
  ].join("\n");
  return {
    async publishSome() {
      for (let i = 0; i < perBurst; i++) {
        // JetStream keeps them while the memory service cannot count (Postgres down).
        await js.publish(subjects.memoryMessage, JSON.stringify({ messageId: `chaos-m-${published}`, text }));
        published++;
      }
    },
    async countedAfterRecovery() {
      const deadline = Date.now() + 120_000;
      let counted = 0;
      while (Date.now() < deadline) {
        const reply = await agent.request(subjects.memoryUsage, JSON.stringify({ rolloutIds: [rollout] }), {
          timeout: 5_000,
        });
        const body = reply.json<{ ok: boolean; result?: { usage: Array<{ usageCount: number | null }> } }>();
        counted = body.result?.usage[0]?.usageCount ?? 0;
        if (counted >= published) break;
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
      return { published, counted };
    },
  };
}

/**
 * The window a process's death leaves open: from the server's answer (its call log's receipt
 * plus the tool's delay) to the JetStream store of the call's end event, over this load's calls.
 */
function eventWindow(
  lines: ReadonlyArray<{ at: string; _meta?: Record<string, unknown> }>,
  events: ReadonlyMap<string, CallEventCounts>,
  load: LoadResult,
): string {
  const mine = new Set(load.calls.map((call) => call.callId));
  const windows = lines
    .flatMap((line) => {
      const callId = line._meta?.callId;
      const stored =
        typeof callId === "string" && mine.has(callId) ? events.get(callId)?.endStoredAt : undefined;
      return stored === undefined ? [] : [stored - (Date.parse(line.at) + WORK_MS)];
    })
    .sort((a, b) => a - b);
  if (windows.length === 0) return "no end event to measure the window by";
  const at = (q: number) =>
    Math.round(windows[Math.min(windows.length - 1, Math.floor(q * windows.length))]!);
  return `server's answer → end event stored: p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms`;
}

/** Connections renewed so far (a service said so in its log), added to the row's note when there were any. */
function withRenewals(row: ScenarioRow, cluster: ToolbusCluster): ScenarioRow {
  const renewed = Object.values(cluster.services)
    .flat()
    .reduce((count, service) => count + service.output().split("renewing the connection").length - 1, 0);
  if (renewed === 0) return row;
  return { ...row, note: `${renewed} NATS connection(s) renewed so far; ${row.note ?? ""}`.trim() };
}

/** The flat name the dispatcher knows a server's tool by, from the gateway's catalog. */
async function flatName(gateway: string, server: string, rawName: string): Promise<string> {
  const catalog = (await (await fetch(`${gateway}/v1/catalog`)).json()) as {
    tools: Array<{ server: string; rawName: string; flatName: string }>;
  };
  const entry = catalog.tools.find((tool) => tool.server === server && tool.rawName === rawName);
  if (!entry) throw new Error(`${server}/${rawName} is not in the catalog`);
  return entry.flatName;
}

/** The events stream's counts once every executed call has both events, or after 30 s. */
async function eventuallyComplete(
  admin: Parameters<typeof callEvents>[0],
  stream: string,
  prefix: string,
  executions: readonly string[],
) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const events = await callEvents(admin, stream, prefix);
    const complete = executions.every((callId) => {
      const seen = events.get(callId);
      return seen !== undefined && seen.begin >= 1 && seen.end >= 1;
    });
    if (complete || Date.now() > deadline) return events;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

/**
 * Approvals under faults: `settings.pendingApprovals` calls of the `guarded` tool wait for a
 * human; then `fault` strikes (an approvals replica killed, or Postgres restarted); then every
 * request is answered through a gateway, and each call must complete, once.
 */
export async function runApprovalsScenario(
  cluster: ToolbusCluster,
  settings: ChaosSettings,
  scenario: string,
  fault: (cluster: ToolbusCluster) => Promise<void>,
): Promise<ScenarioRow> {
  const subjects = createSubjects(cluster.prefix);
  const gateways = cluster.services.gateway.map((g) => g.url as string);
  const tool = await flatName(gateways[0] as string, "test", "guarded");
  const admin = await cluster.adminConnection();
  const load = runLoad({
    gateways,
    tool,
    rate: 50,
    // Exactly `pendingApprovals` calls: one every 20 ms, the last half a step before the end.
    durationMs: ((settings.pendingApprovals - 0.5) * 1_000) / 50,
    attemptTimeoutMs: 120_000,
    giveUpMs: 180_000,
    maxInFlight: settings.pendingApprovals,
  });
  // The approvals inboxes (each replica's HTTP); a request is answered on whichever still runs.
  const inboxes = cluster.services.approvals.map((a) => a.url as string);
  const pending = await untilPending(inboxes, settings.pendingApprovals);
  await fault(cluster);
  for (const [i, requestId] of pending.entries()) {
    await answer(inboxes, i, requestId);
  }
  const result = await load;
  const executions = (await cluster.executions())
    .map((line) => (line._meta as { callId?: string } | undefined)?.callId)
    .filter((callId): callId is string => callId !== undefined);
  const events = await eventuallyComplete(admin, subjects.streams.events.name, cluster.prefix, executions);
  // Every call here started before the fault: recovery is not what this scenario measures.
  return { ...tally(scenario, result, executions, events), "recovery s": "—" };
}

/** The request ids of `count` pending approvals, read page by page from an approvals inbox. */
async function untilPending(inboxes: readonly string[], count: number): Promise<string[]> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const url = `${inboxes[0]}/v1/approvals?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const response = await fetch(url);
      const page = (await response.json()) as { pending?: Array<{ requestId: string }>; nextCursor?: string };
      if (page.pending === undefined) {
        throw new Error(`GET /v1/approvals answered ${response.status}: ${JSON.stringify(page)}`);
      }
      ids.push(...page.pending.map((request) => request.requestId));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    if (ids.length >= count) return ids;
    if (Date.now() > deadline) throw new Error(`only ${ids.length} of ${count} approvals became pending`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Allows one request, trying the inboxes in turn while one cannot answer (its replica gone). */
async function answer(inboxes: readonly string[], i: number, requestId: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (let attempt = 0; Date.now() < deadline; attempt++) {
    const inbox = inboxes[(i + attempt) % inboxes.length];
    try {
      const response = await fetch(`${inbox}/v1/approvals/${encodeURIComponent(requestId)}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ choice: "allow" }),
        signal: AbortSignal.timeout(10_000),
      });
      if (response.status < 500) return;
    } catch {
      // The next inbox.
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`approval ${requestId} could not be answered within 60 s`);
}

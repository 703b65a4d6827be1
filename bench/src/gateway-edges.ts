/**
 * The three MCP edges the gateway benchmark compares, each in front of server-everything over
 * streamable HTTP and each its own processes: the toolbus gateway (with the catalog and the
 * dispatcher, on a nats-server of the bench's own), `supergateway` (stdio → stateful streamable
 * HTTP; one server per session) and `mcp-proxy` (one server for all sessions). Each says which
 * processes it is, with issue 14's aims for toolbus's, so their CPU and memory can be read.
 * toolbus is also measured with MCP 2026-07-28 clients (the v2 SDK's, pinned): the same
 * processes, each request on its own instead of a session's.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { connect } from "@nats-io/transport-node";
import { parseToolbusToml, provisionInputs } from "@toolbus/config";
import {
  approvalPolicyOf,
  freePort,
  provisionPrefix,
  publishApprovalPolicy,
  toolbusToml,
} from "@toolbus/testkit";
import { serverEverythingCommand } from "@toolbus/testkit/mcp-test-server";
import { CPU_AIM_MICROS, RSS_AIM_MB, type Watched } from "./cpu-per-call.js";
import { profileFlags } from "./cpu-profile.js";
import { descendants, descendantsIn } from "./process-usage.js";

/** Toolbus first: the other rows compare against it. */
export const EDGES = ["toolbus", "toolbus 2026-07-28", "supergateway", "mcp-proxy"] as const;
export type EdgeName = (typeof EDGES)[number];
/** The edges that are not toolbus, which its aims are measured against. */
export const PEERS: readonly EdgeName[] = ["supergateway", "mcp-proxy"];
export const MODERN = "2026-07-28";

export const CALL_TIMEOUT_MS = 10_000;
/** initialize and tools/list: supergateway starts a server per session, slow on a busy machine. */
const SESSION_TIMEOUT_MS = 60_000;
/** Three services and their server starting, on a busy machine. */
const STARTUP_TIMEOUT_MS = 90_000;

/** An MCP edge in front of server-everything, the name `echo` has behind it, and its processes. */
export interface Edge {
  name: EdgeName;
  url: string;
  tool: string;
  watched: Watched[];
  /** Its clients speak MCP 2026-07-28 (the v2 SDK's client), not a 2025 revision. */
  era?: typeof MODERN;
}

/** toolbus's edge as its 2026-07-28 clients reach it: the same URL and processes. */
export function modernEdgeOf(toolbus: Edge): Edge {
  return { ...toolbus, name: "toolbus 2026-07-28", era: MODERN };
}

/** A client of an edge, as the benchmark uses it: calls `echo` and ends. */
export interface BenchSession {
  /** The text of the call's first content block. */
  echo(tool: string, message: string): Promise<string | undefined>;
  close(): Promise<void>;
}

/** The catalog, the dispatcher and the gateway, each its own process, run from their build (dist) as deployed. */
export async function startToolbus(deps: {
  natsUrl: string;
  natsPid: number | undefined;
  prefix: string;
  dir: string;
  cleanups: Array<() => Promise<unknown>>;
}): Promise<Edge> {
  const port = await freePort();
  const configPath = join(deps.dir, "toolbus.toml");
  const everything = serverEverythingCommand();
  writeFileSync(
    configPath,
    toolbusToml({
      gateway: { port },
      servers: {
        everything: {
          command: everything.command,
          args: everything.args,
          default_tools_approval_mode: "approve",
        },
      },
    }),
  );
  // Before any service, as `toolbus provision` runs: the assets, sized by the config's tables.
  await provisionPrefix(
    deps.natsUrl,
    deps.prefix,
    provisionInputs(parseToolbusToml(readFileSync(configPath, "utf8"), { path: configPath }), {}),
  );
  // No approvals service here: the policy it would publish is stood in for (mode `approve` needs nobody).
  const nc = await connect({ servers: deps.natsUrl });
  await publishApprovalPolicy(nc, deps.prefix, await approvalPolicyOf(configPath));
  await nc.close();
  const env = { NATS_URL: deps.natsUrl, TOOLBUS_PREFIX: deps.prefix, LOG_LEVEL: "warn" };
  const start = (service: "catalog" | "dispatcher" | "gateway") => {
    // As deployed (the image runs dist/main.js): `pnpm bench` builds first.
    const main = join(repoRoot(), "services", service, "dist", "main.js");
    const child = startChild(
      `toolbus ${service}`,
      [...profileFlags(service), main, "--config", configPath],
      env,
    );
    deps.cleanups.push(() => child.stop());
    return child.pid;
  };
  const catalog = start("catalog");
  const dispatcher = start("dispatcher");
  const gateway = start("gateway");
  const watched: Watched[] = [
    {
      edge: "toolbus",
      process: "gateway",
      pids: () => one(gateway),
      cpuAimMicros: CPU_AIM_MICROS.gateway,
      rssAimMb: RSS_AIM_MB,
    },
    {
      edge: "toolbus",
      process: "dispatcher",
      pids: () => one(dispatcher),
      cpuAimMicros: CPU_AIM_MICROS.dispatcher,
      rssAimMb: RSS_AIM_MB,
    },
    {
      edge: "toolbus",
      process: "catalog connector",
      pids: () => one(catalog),
      cpuAimMicros: CPU_AIM_MICROS.catalog,
      rssAimMb: RSS_AIM_MB,
    },
    {
      edge: "toolbus",
      process: "server-everything",
      pids: (table) => (catalog === undefined ? [] : descendantsIn(table, catalog)),
      note: "the catalog's child",
    },
    {
      edge: "toolbus",
      process: "nats-server",
      pids: () => one(deps.natsPid),
      note: "the bench's own; only toolbus uses it",
    },
  ];
  const edge: Edge = {
    name: "toolbus",
    url: `http://127.0.0.1:${port}/mcp`,
    tool: "everything__echo",
    watched,
  };
  await untilServing(edge);
  return edge;
}

/** supergateway: stdio → stateful streamable HTTP (it starts one server per session). */
export async function startSupergateway(cleanups: Array<() => Promise<unknown>>): Promise<Edge> {
  const port = await freePort();
  const everything = serverEverythingCommand();
  const stdio = [everything.command, ...everything.args].map(shellQuote).join(" ");
  const child = startChild("supergateway", [
    peerBin("supergateway", "supergateway"),
    ...["--stdio", stdio, "--outputTransport", "streamableHttp", "--stateful"],
    ...["--port", String(port), "--streamableHttpPath", "/mcp", "--logLevel", "none"],
  ]);
  cleanups.push(() => child.stop());
  const watched: Watched[] = [
    { edge: "supergateway", process: "supergateway", pids: () => one(child.pid) },
    {
      edge: "supergateway",
      process: "server-everything",
      pids: (table) => (child.pid === undefined ? [] : descendantsIn(table, child.pid)),
      note: "one per session (with its shell), children of supergateway",
    },
  ];
  const edge: Edge = { name: "supergateway", url: `http://127.0.0.1:${port}/mcp`, tool: "echo", watched };
  await untilServing(edge);
  return edge;
}

/** mcp-proxy: one stdio server behind a streamable HTTP endpoint with sessions. */
export async function startMcpProxy(cleanups: Array<() => Promise<unknown>>): Promise<Edge> {
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
  const watched: Watched[] = [
    { edge: "mcp-proxy", process: "mcp-proxy", pids: () => one(child.pid) },
    {
      edge: "mcp-proxy",
      process: "server-everything",
      pids: (table) => (child.pid === undefined ? [] : descendantsIn(table, child.pid)),
      note: "mcp-proxy's child, shared by every session",
    },
  ];
  const edge: Edge = { name: "mcp-proxy", url: `http://127.0.0.1:${port}/mcp`, tool: "echo", watched };
  await untilServing(edge);
  return edge;
}

function one(pid: number | undefined): number[] {
  return pid === undefined ? [] : [pid];
}

// ── sessions ─────────────────────────────────────────────────────────────────────────────────

/** A new MCP session (or 2026-07-28 client) that has listed the tools, as a client does before calling. */
export async function openSession(edge: Edge): Promise<BenchSession> {
  const session = edge.era === MODERN ? await modernSession(edge) : await legacySession(edge);
  const tools = await session.list();
  if (!tools.includes(edge.tool)) {
    await session.close();
    throw new Error(`${edge.name} does not list ${edge.tool}; it lists ${tools.join(", ")}`);
  }
  return session;
}

async function legacySession(edge: Edge): Promise<BenchSession & { list(): Promise<string[]> }> {
  const client = new Client({ name: "toolbus-gateway-bench", version: "0.1.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(edge.url)), { timeout: SESSION_TIMEOUT_MS });
  return {
    list: async () =>
      (await client.listTools(undefined, { timeout: SESSION_TIMEOUT_MS })).tools.map((tool) => tool.name),
    async echo(tool, message) {
      const result = await client.callTool({ name: tool, arguments: { message } }, undefined, {
        timeout: CALL_TIMEOUT_MS,
      });
      return (result.content as Array<{ text?: string }>)[0]?.text;
    },
    // DELETE the session (supergateway stops that session's server), then close the client.
    async close() {
      const transport = client.transport as StreamableHTTPClientTransport | undefined;
      await transport?.terminateSession().catch(() => undefined);
      await client.close().catch(() => undefined);
    },
  };
}

async function modernSession(edge: Edge): Promise<BenchSession & { list(): Promise<string[]> }> {
  const client = new ModernClient(
    { name: "toolbus-gateway-bench", version: "0.1.0" },
    { versionNegotiation: { mode: { pin: MODERN } } },
  );
  await client.connect(new ModernTransport(new URL(edge.url)), { timeout: SESSION_TIMEOUT_MS });
  return {
    list: async () =>
      (await client.listTools(undefined, { timeout: SESSION_TIMEOUT_MS })).tools.map((tool) => tool.name),
    async echo(tool, message) {
      const result = await client.callTool(
        { name: tool, arguments: { message } },
        { timeout: CALL_TIMEOUT_MS },
      );
      return (result.content as Array<{ text?: string }>)[0]?.text;
    },
    close: () => client.close().catch(() => undefined),
  };
}

export function closeSession(session: BenchSession): Promise<void> {
  return session.close();
}

/** Until a session can list `echo` and call it once. */
async function untilServing(edge: Edge): Promise<void> {
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  for (;;) {
    try {
      const session = await openSession(edge);
      try {
        await session.echo(edge.tool, "ready?");
        return;
      } finally {
        await closeSession(session);
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
  pid: number | undefined;
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
    pid: child.pid,
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

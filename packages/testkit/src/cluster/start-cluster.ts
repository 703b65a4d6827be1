/**
 * `startCluster`: toolbus as production runs it, on one machine. A 3-node JetStream cluster with
 * the generated identities, a throwaway Postgres, and every service replica as its own OS
 * process, all configured with the same toolbus.toml whose upstreams are the MCP test server
 * (its call log shows every execution) and server-everything.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { jetstreamManager, StorageType } from "@nats-io/jetstream";
import { connect, type NatsConnection, nkeyAuthenticator } from "@nats-io/transport-node";
import { freePort } from "@toolbus/config";
import { inboxPrefix } from "@toolbus/protocol";
import { stringify } from "smol-toml";
import { eventually } from "../eventually.js";
import { startThrowawayPostgres } from "../infra.js";
import { isolation } from "../isolation.js";
import {
  type CallLogLine,
  serverEverythingCommand,
  startTestServer,
  type TestServerScript,
} from "../mcp-test-server/index.js";
import { exitGuard } from "./exit-guard.js";
import { provisionCluster, writeClusterIdentities } from "./identities.js";
import { type ClusterProcess, ManagedProcess, sleep } from "./managed-process.js";
import { type AdminUser, type NatsNode, startNatsCluster } from "./nats-cluster.js";
import { SERVICE_ROLES, type ServiceRole, serviceSpec } from "./services.js";

export interface ClusterOptions {
  /** Processes per service (defaults: 2 of each). 0 leaves a service out. */
  counts?: Partial<Record<ServiceRole, number>>;
  /** nats-server nodes (default 3). */
  natsNodes?: number;
  /** Replicas of every stream and KV bucket (`TOOLBUS_JS_REPLICAS`; default: the node count). */
  replicas?: number;
  /** The subject prefix (default: a fresh `t_cluster_…`). */
  prefix?: string;
  /** The MCP test server's script, served as `[mcp_servers.test]` (default: an `echo` tool). */
  testServer?: TestServerScript;
  /** Also serve server-everything as `[mcp_servers.everything]` (default true). */
  everything?: boolean;
  /**
   * Both upstreams' `default_tools_approval_mode` (default `approve`: calls run without asking
   * anyone; `prompt` puts every call to an approver).
   */
  approvalMode?: "auto" | "prompt" | "writes" | "approve";
  /**
   * Extra toolbus.toml tables merged over the generated ones, table by table, e.g.
   * `{ approvals: { timeout_sec: 5 } }` or `{ mcp_servers: { test: { tools: { x: { approval_mode: "prompt" } } } } }`.
   */
  toml?: Record<string, unknown>;
  /** How long one process may take to become ready (default 90 s). */
  readyTimeoutMs?: number;
  /**
   * How often a service that exits before it is ready is started again (default 2), as a
   * deployment's restart policy would; 0 makes such an exit fail the start.
   */
  startupRetries?: number;
}

/** One service process, and for the gateway and approvals, its HTTP address. */
export interface ServiceHandle extends ClusterProcess {
  readonly role: ServiceRole;
  readonly index: number;
  /** `http://127.0.0.1:<port>` of a gateway (MCP at `/mcp`) or an approvals inbox; else undefined. */
  readonly url: string | undefined;
}

export interface ToolbusCluster {
  readonly prefix: string;
  /** Every node's client URL, in node order: what `NATS_URL` is set to (comma-joined). */
  readonly natsUrls: readonly string[];
  readonly nats: readonly NatsNode[];
  /** The throwaway Postgres: `stop()` cuts every connection, `start()` brings it back with its data. */
  readonly postgres: { readonly url: string; stop(): Promise<void>; start(): Promise<void> };
  readonly services: Readonly<Record<ServiceRole, readonly ServiceHandle[]>>;
  /** `http://127.0.0.1:<port>/mcp` of each gateway, in order. */
  readonly gatewayMcpUrls: readonly string[];
  /** The folder of every role's seed (`<role>.nk`) and `auth.conf`. */
  readonly identitiesDir: string;
  /** The toolbus.toml every service runs with. */
  readonly configPath: string;
  readonly replicas: number;
  /** The MCP test server's controls: change its script while the cluster runs. */
  readonly testServer: { setScript(script: TestServerScript): Promise<void> };
  /** Every tools/call the test server received (so executed), oldest first, from all its processes. */
  executions(): Promise<CallLogLine[]>;
  /** A NATS connection as the `agent` identity (what an agent runtime has); closed by `stop()`. */
  agentConnection(): Promise<NatsConnection>;
  /** A NATS connection as the harness's admin user (all permissions), for inspecting streams; closed by `stop()`. */
  adminConnection(): Promise<NatsConnection>;
  /** Kills every process, the Postgres cluster, and removes every temporary folder. */
  stop(): Promise<void>;
}

const DEFAULT_COUNT = 2;
const DEFAULT_NATS_NODES = 3;
const DEFAULT_READY_TIMEOUT_MS = 90_000;
const DEFAULT_STARTUP_RETRIES = 2;
const DEFAULT_SCRIPT: TestServerScript = { tools: [{ name: "echo" }] };

export async function startCluster(options: ClusterOptions = {}): Promise<ToolbusCluster> {
  const readyTimeoutMs = options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS;
  const natsNodes = options.natsNodes ?? DEFAULT_NATS_NODES;
  const replicas = options.replicas ?? natsNodes;
  const prefix = options.prefix ?? isolation("cluster").prefix;
  const approvalMode = options.approvalMode ?? "approve";
  const dir = mkdtempSync(join(tmpdir(), "toolbus-cluster-"));
  const stops: Array<() => Promise<unknown>> = [];
  const forgetDir = exitGuard.onExit(() => rmSync(dir, { recursive: true, force: true }));
  stops.push(async () => {
    rmSync(dir, { recursive: true, force: true });
    forgetDir();
  });
  const connections: NatsConnection[] = [];
  const stopAll = async () => {
    await Promise.allSettled(connections.splice(0).map((nc) => nc.close()));
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => undefined);
  };

  try {
    const admin: AdminUser = { user: "admin", password: randomBytes(18).toString("base64url") };
    const starting = [
      startThrowawayPostgres().then((pg) => {
        // destroy() runs pg_ctl synchronously, so it also works in the exit handler.
        const forget = exitGuard.onExit(() => void pg.destroy());
        stops.push(async () => {
          await pg.destroy();
          forget();
        });
        return pg;
      }),
      startTestServer({ transport: "stdio", script: options.testServer ?? DEFAULT_SCRIPT }).then((server) => {
        const forget = exitGuard.onExit(() =>
          rmSync(dirname(server.scriptPath), { recursive: true, force: true }),
        );
        stops.push(async () => {
          await server.dispose();
          forget();
        });
        return server;
      }),
    ] as const;
    // Every part settles (and registers its clean-up) before a failure of another is thrown.
    await Promise.allSettled(starting);
    const [postgres, testServer] = await Promise.all(starting);

    const configPath = join(dir, "toolbus.toml");
    writeFileSync(
      configPath,
      stringify(
        mergeTables(
          {
            mcp_servers: {
              test: {
                command: testServer.command,
                args: testServer.args,
                default_tools_approval_mode: approvalMode,
              },
              ...(options.everything === false
                ? {}
                : {
                    everything: { ...serverEverythingCommand(), default_tools_approval_mode: approvalMode },
                  }),
            },
          },
          options.toml ?? {},
        ),
      ),
    );
    // The config's servers each get a connector identity: the identities follow the config.
    const identities = await writeClusterIdentities(join(dir, "identities"), prefix, configPath);
    const nats = await startNatsCluster({
      dir: join(dir, "nats"),
      nodes: natsNodes,
      authConfFile: identities.authConf,
      admin,
      readyTimeoutMs,
    });
    stops.push(() => Promise.all(nats.map((node) => node.kill())));
    const natsUrls = nats.map((node) => node.url);
    // Healthy nodes are not yet a cluster that can place a stream on `replicas` of them (each
    // node's JetStream must be known to the meta leader); provisioning before that fails with
    // "no suitable peers for placement".
    await untilJetStreamPlaces(
      { servers: natsUrls, user: admin.user, pass: admin.password },
      replicas,
      readyTimeoutMs,
    );
    // Before any service, as a deployment runs it: the provisioner makes the streams.
    await provisionCluster({ identities, natsUrls, prefix, replicas, configPath, timeoutMs: readyTimeoutMs });

    const handles = await Promise.all(
      SERVICE_ROLES.flatMap((role) =>
        Array.from({ length: options.counts?.[role] ?? DEFAULT_COUNT }, async (_, index) => {
          const httpPort = role === "gateway" || role === "approvals" ? await freePort() : undefined;
          const proc = new ManagedProcess(
            serviceSpec({
              role,
              index,
              natsUrls,
              identitiesDir: identities.dir,
              prefix,
              replicas,
              configPath,
              databaseUrl: postgres.url,
              ...(httpPort === undefined ? {} : { httpPort }),
              readyTimeoutMs,
              startupRetries: options.startupRetries ?? DEFAULT_STARTUP_RETRIES,
            }),
          );
          return {
            role,
            index,
            proc,
            url: httpPort === undefined ? undefined : `http://127.0.0.1:${httpPort}`,
          };
        }),
      ),
    );
    stops.push(() => Promise.all(handles.map(({ proc }) => proc.stop())));
    const starts = handles.map(({ proc }) => proc.start());
    await Promise.allSettled(starts);
    await Promise.all(starts);
    const upstreams = ["test", ...(options.everything === false ? [] : ["everything"])];
    await Promise.all(
      handles
        .filter(({ role }) => role === "gateway")
        .map(({ url }) => untilGatewayLists(`${url}/mcp`, upstreams, readyTimeoutMs)),
    );

    const services = Object.fromEntries(
      SERVICE_ROLES.map((role) => [
        role,
        handles.filter((handle) => handle.role === role).map((handle) => serviceHandle(handle)),
      ]),
    ) as Record<ServiceRole, ServiceHandle[]>;

    const open = async (connectionOptions: Parameters<typeof connect>[0]) => {
      const nc = await connect({
        ...connectionOptions,
        // Reconnects across nodes forever once connected; the first connect fails within 5 s.
        maxReconnectAttempts: -1,
        reconnectTimeWait: 250,
        timeout: 5_000,
      });
      connections.push(nc);
      return nc;
    };

    return {
      prefix,
      natsUrls,
      nats,
      postgres: { url: postgres.url, stop: postgres.stop, start: postgres.start },
      services,
      gatewayMcpUrls: services.gateway.map((gateway) => `${gateway.url}/mcp`),
      identitiesDir: identities.dir,
      configPath,
      replicas,
      testServer: { setScript: (script) => testServer.setScript(script) },
      executions: () => testServer.calls(),
      agentConnection: () =>
        open({
          servers: [...natsUrls],
          authenticator: nkeyAuthenticator(new TextEncoder().encode(identities.seed("agent"))),
          // The agent may receive replies only under its own inbox prefix.
          inboxPrefix: inboxPrefix(prefix, "agent"),
        }),
      adminConnection: () => open({ servers: [...natsUrls], user: admin.user, pass: admin.password }),
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

function serviceHandle(handle: {
  role: ServiceRole;
  index: number;
  proc: ManagedProcess;
  url: string | undefined;
}): ServiceHandle {
  const { role, index, proc, url } = handle;
  return {
    role,
    index,
    url,
    name: proc.name,
    get pid() {
      return proc.pid;
    },
    get running() {
      return proc.running;
    },
    kill: () => proc.kill(),
    restart: () => proc.restart(),
    output: () => proc.output(),
  };
}

/**
 * Waits until JetStream places a stream on `replicas` nodes: a throwaway in-memory stream is
 * created (and deleted) until that succeeds; fails after `timeoutMs` with the last refusal.
 */
async function untilJetStreamPlaces(
  options: { servers: string[]; user: string; pass: string },
  replicas: number,
  timeoutMs: number,
): Promise<void> {
  const nc = await connect({ ...options, timeout: 5_000 });
  const name = `PLACEMENT_PROBE_${randomBytes(4).toString("hex")}`;
  try {
    await eventually(
      `the NATS cluster to place a stream on ${replicas} nodes`,
      async () => {
        const jsm = await jetstreamManager(nc, { timeout: 5_000 });
        await jsm.streams.add({
          name,
          subjects: [`_placement_probe.${name}`],
          num_replicas: replicas,
          storage: StorageType.Memory,
        });
        await jsm.streams.delete(name);
        return true;
      },
      timeoutMs,
    );
  } finally {
    await nc.close();
  }
}

/**
 * Waits until JetStream answers through `nc` (after a node's loss the cluster may need a moment
 * to elect new leaders); throws after `timeoutMs`.
 */
export async function untilJetStreamAnswers(nc: NatsConnection, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await (await jetstreamManager(nc, { timeout: 2_000 })).getAccountInfo();
      return;
    } catch (error) {
      if (Date.now() > deadline)
        throw new Error(`JetStream did not answer within ${timeoutMs / 1000} s`, { cause: error });
      await sleep(200);
    }
  }
}

/**
 * A gateway is ready for MCP clients once it lists a tool of every upstream (`<server>__…`):
 * its catalog may load before the catalog services have connected their servers.
 */
async function untilGatewayLists(
  mcpUrl: string,
  servers: readonly string[],
  timeoutMs: number,
): Promise<void> {
  const client = new Client({ name: "toolbus-cluster-harness", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl)));
  try {
    const deadline = Date.now() + timeoutMs;
    let missing: string[] = [...servers];
    while (missing.length > 0) {
      if (Date.now() > deadline) {
        throw new Error(
          `the gateway at ${mcpUrl} lists no tools of ${missing.join(", ")} after ${timeoutMs / 1000} s`,
        );
      }
      const { tools } = await client.listTools();
      missing = servers.filter((server) => !tools.some((tool) => tool.name.startsWith(`${server}__`)));
      if (missing.length > 0) await sleep(250);
    }
  } finally {
    await client.close();
  }
}

/** `over` merged into `base`: tables (plain objects) key by key, any other value replaced. */
function mergeTables(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = merged[key];
    merged[key] = isTable(current) && isTable(value) ? mergeTables(current, value) : value;
  }
  return merged;
}

function isTable(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

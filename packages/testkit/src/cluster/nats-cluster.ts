/**
 * A JetStream cluster of real nats-server processes on loopback: each node with its own client,
 * route and monitoring port and its own store directory, all routed to each other, all with the
 * same accounts block (the identities `toolbus nats-config` writes, plus the harness's own admin
 * user). A killed node restarts on the same ports and store, and rejoins.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "@toolbus/config";
import { type ClusterProcess, ManagedProcess, sleep } from "./managed-process.js";

/**
 * Which nats-server runs the cluster, first found: `TOOLBUS_NATS_SERVER`; the 2.10 one
 * `scripts/setup.sh --tests` fetches where the system's is older (the deploy files run 2.10, so
 * the cluster tests do too); the system's.
 */
const BINARIES = [
  process.env.TOOLBUS_NATS_SERVER,
  fileURLToPath(new URL("../../../../.toolbus/bin/nats-server", import.meta.url)),
  "/usr/sbin/nats-server",
  "/usr/bin/nats-server",
  "/usr/local/bin/nats-server",
].filter((candidate): candidate is string => candidate !== undefined && candidate !== "");

export interface NatsNode extends ClusterProcess {
  /** Its `server_name` (`n1`, `n2`, …), as JetStream names leaders and replicas. */
  readonly serverName: string;
  /** `nats://127.0.0.1:<port>` */
  readonly url: string;
  /** The monitoring endpoint, `http://127.0.0.1:<port>` (`/healthz`, `/jsz`, `/routez`). */
  readonly monitorUrl: string;
  /** The lines where this node refused a client's publish or subscription ("Permissions Violation"). */
  violations(): string[];
}

/** The harness's own user, outside the generated permissions: it may inspect and change anything. */
export interface AdminUser {
  user: string;
  password: string;
}

export interface NatsClusterOptions {
  /** Where each node keeps its config and store (`<dir>/n<i>/`). */
  dir: string;
  nodes: number;
  /** The file holding the `accounts { TOOLBUS … }` block (`writeNatsIdentities`' authConf). */
  authConfFile: string;
  admin: AdminUser;
  readyTimeoutMs: number;
}

export async function startNatsCluster(options: NatsClusterOptions): Promise<ManagedNatsNode[]> {
  const binary = BINARIES.find((candidate) => existsSync(candidate));
  if (!binary)
    throw new Error(`nats-server not found (looked in ${BINARIES.join(", ")}); apt-get install nats-server`);
  const ports = await distinctPorts(options.nodes);
  const auth = withAdminUser(readFileSync(options.authConfFile, "utf8"), options.admin);
  const nodes = ports.map((port, index) => {
    const name = `n${index + 1}`;
    const dir = join(options.dir, name);
    mkdirSync(dir, { recursive: true });
    // Every node, itself included, as deploy/nats/cluster-node.sh routes them (nats-server skips
    // the route to itself, and sizes a new JetStream meta group by its routes: 3, not 2).
    const routes = ports.map((other) => `nats-route://127.0.0.1:${other.route}`);
    // nats-server resolves `include` against the config's own folder, so the block sits beside it.
    writeFileSync(join(dir, "auth.conf"), auth, { mode: 0o600 });
    const conf = join(dir, "nats.conf");
    writeFileSync(
      conf,
      [
        `server_name: ${name}`,
        `listen: "127.0.0.1:${port.client}"`,
        `http: "127.0.0.1:${port.monitor}"`,
        `jetstream { store_dir: ${JSON.stringify(join(dir, "js"))}, max_memory_store: 1GB, max_file_store: 64GB }`,
        "cluster {",
        "  name: toolbus",
        `  listen: "127.0.0.1:${port.route}"`,
        `  routes: [${routes.map((route) => JSON.stringify(route)).join(", ")}]`,
        "}",
        'include "auth.conf"',
        "",
      ].join("\n"),
    );
    return new ManagedNatsNode({
      name: `nats ${name}`,
      command: binary,
      args: ["-c", conf],
      env: {},
      readyLine: /Server is ready/,
      probe: () => healthy(`http://127.0.0.1:${port.monitor}`),
      readyTimeoutMs: options.readyTimeoutMs,
      serverName: name,
      url: `nats://127.0.0.1:${port.client}`,
      monitorUrl: `http://127.0.0.1:${port.monitor}`,
    });
  });
  // JetStream needs a quorum before any node reports healthy: start all, then wait for all.
  const started = await Promise.allSettled(nodes.map((node) => node.start()));
  const failed = started.find((result) => result.status === "rejected");
  try {
    if (failed) throw failed.reason;
    await untilMetaGroupHoldsEveryNode(nodes, options.readyTimeoutMs);
  } catch (error) {
    await Promise.all(nodes.map((node) => node.kill()));
    throw error;
  }
  return nodes;
}

/** How long a meta leader may leave a node out of its group before that node is restarted. */
const LEFT_OUT_GRACE_MS = 5_000;
/** How often one start restarts nodes left out before it gives up. */
const MAX_LEFT_OUT_RESTARTS = 3;

/**
 * Waits until the JetStream meta group holds every node, restarting a node its leader leaves out.
 * nats-server 2.10 (the deploy files' version) can bootstrap a new cluster without one node: two
 * elect a leader before the third's vote arrives, the leader never adds the third, and its group
 * stays at 2 of 3 for good, so no stream is ever placed on 3 nodes ("no suitable peers for
 * placement"). Seen in about 1 start of 16 on a loaded 2-core machine, never with 2.15.1 in 80;
 * once the node left out is restarted, the leader adds it within a second or two.
 */
async function untilMetaGroupHoldsEveryNode(
  nodes: readonly ManagedNatsNode[],
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let leftOutSince: number | undefined;
  let restarts = 0;
  let seen = "no node has answered /jsz";
  for (;;) {
    const group = await metaGroup(nodes);
    if (group) {
      const leftOut = nodes.filter((node) => !group.members.has(node.serverName));
      if (leftOut.length === 0) return;
      seen = `the meta leader ${group.leader} holds ${[...group.members].join(", ")}, not ${leftOut.map((node) => node.serverName).join(", ")}`;
      leftOutSince ??= Date.now();
      if (Date.now() - leftOutSince > LEFT_OUT_GRACE_MS && restarts < MAX_LEFT_OUT_RESTARTS) {
        restarts++;
        for (const node of leftOut) await node.restart();
        leftOutSince = undefined;
      }
    } else {
      leftOutSince = undefined;
    }
    if (Date.now() > deadline)
      throw new Error(
        `the NATS cluster's JetStream meta group did not take in every node within ${timeoutMs / 1000} s: ${seen}`,
      );
    await sleep(250);
  }
}

/** The meta leader's view of its group (`/jsz` of the node that says it leads), if one leads. */
async function metaGroup(
  nodes: readonly ManagedNatsNode[],
): Promise<{ leader: string; members: Set<string> } | undefined> {
  for (const node of nodes) {
    const jsz = await fetch(`${node.monitorUrl}/jsz`, { signal: AbortSignal.timeout(2_000) })
      .then((response) => (response.ok ? (response.json() as Promise<Jsz>) : undefined))
      .catch(() => undefined);
    const meta = jsz?.meta_cluster;
    if (meta?.leader === node.serverName) {
      return {
        leader: meta.leader,
        members: new Set([meta.leader, ...(meta.replicas ?? []).map((peer) => peer.name)]),
      };
    }
  }
  return undefined;
}

/** The part of nats-server's `/jsz` read here. */
interface Jsz {
  meta_cluster?: { leader?: string; replicas?: Array<{ name: string }> };
}

export class ManagedNatsNode extends ManagedProcess implements NatsNode {
  readonly serverName: string;
  readonly url: string;
  readonly monitorUrl: string;

  constructor(
    spec: ConstructorParameters<typeof ManagedProcess>[0] & {
      serverName: string;
      url: string;
      monitorUrl: string;
    },
  ) {
    super(spec);
    this.serverName = spec.serverName;
    this.url = spec.url;
    this.monitorUrl = spec.monitorUrl;
  }

  violations(): string[] {
    return this.output()
      .split("\n")
      .filter((line) => line.includes("Permissions Violation"));
  }
}

/** `/healthz` answers 200 once the node serves clients and its JetStream is current with the cluster. */
async function healthy(monitorUrl: string): Promise<boolean> {
  const response = await fetch(`${monitorUrl}/healthz`, { signal: AbortSignal.timeout(2_000) });
  return response.ok;
}

const USERS_LINE = "    users: [\n";

/** The generated accounts block with the admin user added to the TOOLBUS account (no permissions: all allowed). */
export function withAdminUser(authConf: string, admin: AdminUser): string {
  if (!authConf.includes(USERS_LINE)) {
    throw new Error("auth.conf from toolbus nats-config has no `users: [` line to add the admin user to");
  }
  const line = `      { user: ${JSON.stringify(admin.user)}, password: ${JSON.stringify(admin.password)} }\n`;
  return authConf.replace(USERS_LINE, `${USERS_LINE}${line}`);
}

/**
 * Three ports per node, all different: asked one at a time, and asked again when the OS hands
 * back one already taken here (a freed port may be handed out twice; two nodes on one route
 * port make one of them exit).
 */
async function distinctPorts(
  nodes: number,
): Promise<Array<{ client: number; route: number; monitor: number }>> {
  const taken = new Set<number>();
  const next = async (): Promise<number> => {
    for (;;) {
      const port = await freePort();
      if (!taken.has(port)) {
        taken.add(port);
        return port;
      }
    }
  };
  const ports: Array<{ client: number; route: number; monitor: number }> = [];
  for (let i = 0; i < nodes; i++)
    ports.push({ client: await next(), route: await next(), monitor: await next() });
  return ports;
}

// The cluster harness as a whole: toolbus on a 3-node JetStream cluster with every service
// replica its own process answers MCP calls through either gateway, keeps every stream and bucket
// on 3 nodes, and keeps answering when one NATS node is SIGKILLed and after it rejoins.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { jetstreamManager, type StreamInfo } from "@nats-io/jetstream";
import { provision } from "@toolbus/bus";
import { DEFAULT_BUS_CONFIG, DEFAULT_MEMORY_CONFIG, provisionInputs } from "@toolbus/config";
import { assetStreams, createSubjects } from "@toolbus/protocol";
import { startCluster, type ToolbusCluster, untilJetStreamAnswers } from "@toolbus/testkit/cluster";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/** The test server's `echo` as the gateway names it (`<server>__<tool>`). */
const TOOL = "test__echo";
/** A call that fails during a node's loss is tried again, at most this often, each within CALL_TIMEOUT_MS. */
/**
 * How long a call is tried again while toolbus fails. It must outlast a JetStream election: a
 * stream whose leader died has none for 4–9 s (nats-server's raft election timeout), and calls
 * meanwhile are refused at once ("the call ledger did not answer … send it again").
 */
const RETRY_FOR_MS = 45_000;
const CALL_TIMEOUT_MS = 8_000;

let cluster: ToolbusCluster;
const clients: Client[] = [];

beforeAll(async () => {
  // Within the hook's 90 s, so a process that does not come up is named with its output.
  cluster = await startCluster({ readyTimeoutMs: 75_000 });
  for (const url of cluster.gatewayMcpUrls) {
    const client = new Client({ name: "cluster-smoke", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    clients.push(client);
  }
}, 90_000);

afterAll(async () => {
  await Promise.allSettled(clients.map((client) => client.close()));
  await cluster?.stop();
}, 60_000);

/**
 * The echo tool's answer (the arguments as JSON), trying again while toolbus fails: echo itself
 * never fails, so every failure is toolbus's. While a node is lost, a call can time out, or come
 * back as a tool error naming a subject nobody answers (a service still reconnecting), or be
 * refused while a stream it needs elects a new leader.
 */
async function echo(client: Client, message: string): Promise<{ text: string; attempts: number }> {
  const failures: string[] = [];
  const deadline = Date.now() + RETRY_FOR_MS;
  for (let attempt = 1; attempt === 1 || Date.now() < deadline; attempt++) {
    try {
      const result = await client.callTool({ name: TOOL, arguments: { message } }, undefined, {
        timeout: CALL_TIMEOUT_MS,
      });
      const text = (result.content as Array<{ type: string; text?: string }>)[0]?.text ?? "";
      if (result.isError !== true) return { text, attempts: attempt };
      failures.push(`error result: ${text}`);
    } catch (error) {
      failures.push(`thrown: ${error instanceof Error ? error.message : String(error)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  // What the services said meanwhile, for whoever reads the failure.
  const said = Object.values(cluster.services)
    .flat()
    .map((service) => `${service.name}:\n${service.output().split("\n").slice(-8).join("\n")}`);
  throw new Error(
    `${TOOL} was not answered in ${failures.length} attempts over ${RETRY_FOR_MS / 1000} s:\n${failures.slice(-5).join("\n")}\n\n${said.join("\n")}`,
  );
}

async function executedMessages(): Promise<unknown[]> {
  return (await cluster.executions())
    .filter((line) => line.tool === "echo")
    .map((line) => line.arguments?.message);
}

/** Every stream of this cluster's prefix (KV buckets are streams too) with where it is kept. */
async function streams(): Promise<StreamInfo[]> {
  const jsm = await jetstreamManager(await cluster.adminConnection(), { timeout: 10_000 });
  const all = await jsm.streams.list().next();
  return all.filter((info) => info.config.name.toLowerCase().includes(cluster.prefix.toLowerCase()));
}

describe("toolbus on a 3-node NATS cluster", () => {
  it("answers a call through each gateway, and the test server executes each once", async () => {
    expect(await echo(clients[0] as Client, "through gateway 1")).toEqual({
      text: JSON.stringify({ message: "through gateway 1" }),
      attempts: 1,
    });
    expect(await echo(clients[1] as Client, "through gateway 2")).toEqual({
      text: JSON.stringify({ message: "through gateway 2" }),
      attempts: 1,
    });
    expect(await executedMessages()).toEqual(["through gateway 1", "through gateway 2"]);
  });

  it("gives a connection as the agent identity, which the memory service answers", async () => {
    const agent = await cluster.agentConnection();
    const reply = await agent.request(
      createSubjects(cluster.prefix).memoryStrip,
      JSON.stringify({ text: "no citations here" }),
      { timeout: 10_000 },
    );
    expect(reply.json()).toEqual({ ok: true, result: { visibleText: "no citations here", citation: null } });
  });

  it("keeps the events and memory streams and the catalog and grants buckets on 3 nodes", async () => {
    const subjects = createSubjects(cluster.prefix);
    const placement = Object.fromEntries(
      (await streams()).map((info) => [
        info.config.name,
        { replicas: info.config.num_replicas, nodes: 1 + (info.cluster?.replicas?.length ?? 0) },
      ]),
    );
    const onThree = { replicas: 3, nodes: 3 };
    expect(placement).toMatchObject({
      [subjects.streams.events.name]: onThree,
      [subjects.streams.memory.name]: onThree,
      [`KV_${subjects.kv.catalog}`]: onThree,
      [`KV_${subjects.kv.approvalGrants}`]: onThree,
    });
    // And every other stream or bucket the provisioner made (sessions, resource origins, …).
    expect(Object.values(placement).filter((where) => where.replicas !== 3 || where.nodes !== 3)).toEqual([]);
  });

  it("has toolbus provision bring every asset kept on 1 node up to 3 (a deployment moving onto a cluster)", async () => {
    const admin = await cluster.adminConnection();
    const jsm = await jetstreamManager(admin, { timeout: 10_000 });
    const moving = createSubjects(`${cluster.prefix}_moving`);
    const settings = { ...provisionInputs({ bus: DEFAULT_BUS_CONFIG, memory: DEFAULT_MEMORY_CONFIG }, {}) };
    await provision(jsm, moving, { ...settings, replicas: 1 });
    const names = assetStreams(moving);
    const replicas = async () =>
      Object.fromEntries(
        await Promise.all(
          names.map(async (name) => [name, (await jsm.streams.info(name)).config.num_replicas]),
        ),
      );
    expect(new Set(Object.values(await replicas()))).toEqual(new Set([1]));

    const report = await provision(jsm, moving, { ...settings, replicas: 3 });

    expect(new Set(Object.values(await replicas()))).toEqual(new Set([3]));
    expect(report.updated).toEqual(expect.arrayContaining(names));
  });

  it("keeps answering while a dispatcher is SIGKILLed, and the dispatcher comes back as a new process", async () => {
    const [dispatcher] = cluster.services.dispatcher;
    if (!dispatcher) throw new Error("the cluster has no dispatcher");
    const before = dispatcher.pid;
    await dispatcher.kill();
    expect({ running: dispatcher.running, pid: dispatcher.pid }).toEqual({ running: false, pid: undefined });
    expect((await echo(clients[0] as Client, "one dispatcher left")).text).toBe(
      JSON.stringify({ message: "one dispatcher left" }),
    );
    await dispatcher.restart();
    expect(dispatcher.running).toBe(true);
    expect(dispatcher.pid).not.toBe(before);
    expect(dispatcher.output()).toContain(`--- ${dispatcher.name} started again ---`);
  });

  it("keeps answering when the events stream's leader node is SIGKILLed, and the node rejoins", async () => {
    const admin = await cluster.adminConnection();
    const jsm = await jetstreamManager(admin, { timeout: 10_000 });
    const events = createSubjects(cluster.prefix).streams.events.name;
    const leader = (await jsm.streams.info(events)).cluster?.leader;
    const lost = cluster.nats.find((node) => node.serverName === leader);
    if (!lost) throw new Error(`no node of the cluster leads ${events} (leader ${leader})`);
    await lost.kill();
    expect(lost.running).toBe(false);

    const whileDown = ["node down, gateway 1", "node down, gateway 2"];
    expect((await echo(clients[0] as Client, whileDown[0] as string)).text).toBe(
      JSON.stringify({ message: whileDown[0] }),
    );
    expect((await echo(clients[1] as Client, whileDown[1] as string)).text).toBe(
      JSON.stringify({ message: whileDown[1] }),
    );
    // Every service moved to another node instead of exiting.
    expect(
      Object.values(cluster.services)
        .flat()
        .filter((service) => !service.running)
        .map((service) => service.name),
    ).toEqual([]);

    await lost.restart();
    await untilJetStreamAnswers(admin);
    // Rejoined: the events stream is kept on all three nodes again, each replica current.
    let peers: string[] = [];
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      // While leaders are elected again, JetStream may not answer for a moment.
      const where = await jsm.streams.info(events).then(
        (info) => info.cluster,
        () => undefined,
      );
      const current = (where?.replicas ?? []).filter((replica) => replica.current && !replica.offline);
      peers = [where?.leader ?? "", ...current.map((replica) => replica.name)].sort();
      if (peers.length === 3 && !peers.includes("")) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(peers).toEqual(["n1", "n2", "n3"]);

    expect((await echo(clients[0] as Client, "node back")).text).toBe(
      JSON.stringify({ message: "node back" }),
    );
    const executed = await executedMessages();
    for (const message of [...whileDown, "node back"]) expect(executed).toContain(message);
  }, 150_000);

  it("never refused a service or the agent anything on any node, through all of the above", () => {
    expect(cluster.nats.flatMap((node) => node.violations())).toEqual([]);
  });
});

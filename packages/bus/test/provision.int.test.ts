/**
 * The provisioner makes every JetStream asset of a bus before any service runs, and brings each
 * back in line with the contract and the settings; a service refuses to start on assets that are
 * missing or unlike the contract (`verifyAssets`), naming each difference. On the test NATS, each
 * test under a prefix of its own; what differs between nats-server versions, on each one here.
 */
import { AckPolicy, type JetStreamManager, jetstreamManager, type StreamConfig } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { createSubjects, identityOf, internalSubjects, type Subjects } from "@toolbus/protocol";
import { cleanupJetStream, isolation, natsServerBinaries, startNatsServer } from "@toolbus/testkit";
import { provided } from "@toolbus/testkit/provided";
import { afterEach, describe, expect, it } from "vitest";
import {
  AssetsNotProvisioned,
  CALL_RECORD_TTL_MS,
  EVENT_DUPLICATE_WINDOW_MS,
  EXECUTION_RECORD_TTL_MS,
  ProvisionError,
  type ProvisionSettings,
  provision,
  RESOURCE_ORIGIN_TTL_MS,
  verifyAssets,
} from "../src/provision.js";

const MIB = 1024 * 1024;
const SETTINGS: ProvisionSettings = {
  replicas: 1,
  events: { maxAgeMs: 60 * 60_000, maxBytes: 64 * MIB },
  memory: { maxAgeMs: 2 * 60 * 60_000, maxBytes: 32 * MIB },
  largeReplies: { maxAgeMs: 10 * 60_000, maxBytes: 16 * MIB },
  // Shorter than JetStream's default duplicate window, which must then shrink to fit it.
  gatewaySessionTtlMs: 60_000,
  memoryConsumer: { ackWaitMs: 7_000, maxAckPending: 2_000 },
};
const NANOS = 1_000_000;

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function fresh(): Promise<{ nc: NatsConnection; jsm: JetStreamManager; subjects: Subjects }> {
  const { prefix } = isolation("provision");
  const nc = await connect({ servers: provided().natsUrl });
  cleanups.push(() => nc.close());
  cleanups.push(() => cleanupJetStream(provided().natsUrl, prefix));
  return { nc, jsm: await jetstreamManager(nc), subjects: createSubjects(prefix) };
}

/** Every stream and consumer name the provisioner reports for a prefix, sorted. */
function assetNames(subjects: Subjects): string[] {
  const internal = internalSubjects(subjects.prefix);
  const buckets = [
    subjects.kv.catalog,
    subjects.kv.approvalGrants,
    subjects.kv.callHistory,
    ...Object.values(internal.kv),
  ].map((bucket) => `KV_${bucket}`);
  const streams = Object.values(subjects.streams).map((names) => names.name);
  return [...buckets, ...streams, `${subjects.streams.memory.name}/memory`].sort();
}

const sorted = (names: readonly string[]) => [...names].sort();

describe("provision", () => {
  it("creates every stream, bucket and the memory consumer, sized by the settings", async () => {
    const { nc, jsm, subjects } = await fresh();
    const report = await provision(jsm, subjects, SETTINGS);
    expect({ ...report, created: sorted(report.created) }).toEqual({
      created: assetNames(subjects),
      updated: [],
      unchanged: [],
    });

    const internal = internalSubjects(subjects.prefix);
    const kvm = new Kvm(nc);
    const ttlOf = async (bucket: string) => (await (await kvm.open(bucket)).status()).ttl;
    expect({
      calls: await ttlOf(internal.kv.calls),
      executions: await ttlOf(internal.kv.executions),
      origins: await ttlOf(internal.kv.resourceOrigins),
      sessions: await ttlOf(internal.kv.gatewaySessions),
      history: await ttlOf(subjects.kv.callHistory),
      catalog: await ttlOf(subjects.kv.catalog),
    }).toEqual({
      calls: CALL_RECORD_TTL_MS,
      executions: EXECUTION_RECORD_TTL_MS,
      origins: RESOURCE_ORIGIN_TTL_MS,
      sessions: 60_000,
      // The thread index lives as long as the events it points at.
      history: SETTINGS.events.maxAgeMs,
      catalog: 0,
    });
    const sessions = await jsm.streams.info(`KV_${internal.kv.gatewaySessions}`);
    expect(sessions.config.duplicate_window).toBe(60_000 * NANOS);

    const events = (await jsm.streams.info(subjects.streams.events.name)).config;
    expect({
      subjects: events.subjects,
      maxAge: events.max_age,
      maxBytes: events.max_bytes,
      duplicateWindow: events.duplicate_window,
      denyDelete: events.deny_delete,
      denyPurge: events.deny_purge,
    }).toEqual({
      subjects: [`${subjects.prefix}.events.>`],
      maxAge: SETTINGS.events.maxAgeMs * NANOS,
      maxBytes: SETTINGS.events.maxBytes,
      duplicateWindow: EVENT_DUPLICATE_WINDOW_MS * NANOS,
      denyDelete: true,
      denyPurge: true,
    });

    const consumer = (await jsm.consumers.info(subjects.streams.memory.name, "memory")).config;
    expect({
      filter: consumer.filter_subject,
      ackPolicy: consumer.ack_policy,
      ackWait: consumer.ack_wait,
      maxAckPending: consumer.max_ack_pending,
      maxDeliver: consumer.max_deliver,
      push: consumer.deliver_subject,
    }).toEqual({
      filter: subjects.memoryMessage,
      ackPolicy: AckPolicy.Explicit,
      ackWait: 7_000 * NANOS,
      maxAckPending: 2_000,
      maxDeliver: -1,
      push: undefined,
    });
  });

  it("is idempotent: run again, it changes nothing and reports every asset unchanged", async () => {
    const { jsm, subjects } = await fresh();
    await provision(jsm, subjects, SETTINGS);
    const again = await provision(jsm, subjects, SETTINGS);
    expect({ ...again, unchanged: sorted(again.unchanged) }).toEqual({
      created: [],
      updated: [],
      unchanged: assetNames(subjects),
    });
  });

  it("brings changed settings into the existing assets, keeping what they hold", async () => {
    const { nc, jsm, subjects } = await fresh();
    await provision(jsm, subjects, SETTINGS);
    const sessions = await new Kvm(nc).open(internalSubjects(subjects.prefix).kv.gatewaySessions);
    await sessions.put("s1", "kept");

    const changed = {
      ...SETTINGS,
      events: { ...SETTINGS.events, maxBytes: 128 * MIB },
      gatewaySessionTtlMs: 5 * 60_000,
      memoryConsumer: { ackWaitMs: 9_000, maxAckPending: 4_000 },
    };
    const report = await provision(jsm, subjects, changed);
    expect(sorted(report.updated)).toEqual(
      sorted([
        subjects.streams.events.name,
        // The call-history index is sized from the events stream.
        `KV_${subjects.kv.callHistory}`,
        `KV_${internalSubjects(subjects.prefix).kv.gatewaySessions}`,
        `${subjects.streams.memory.name}/memory`,
      ]),
    );
    expect({
      kept: (await sessions.get("s1"))?.string(),
      ttl: (await sessions.status()).ttl,
      eventsBytes: (await jsm.streams.info(subjects.streams.events.name)).config.max_bytes,
      ackWait: (await jsm.consumers.info(subjects.streams.memory.name, "memory")).config.ack_wait,
    }).toEqual({ kept: "kept", ttl: 5 * 60_000, eventsBytes: 128 * MIB, ackWait: 9_000 * NANOS });
    expect((await provision(jsm, subjects, changed)).updated).toEqual([]);
  });

  it("refuses a memory consumer unlike the contract, saying how to make it anew", async () => {
    const { jsm, subjects } = await fresh();
    await provision(jsm, subjects, SETTINGS);
    const stream = subjects.streams.memory.name;
    await jsm.consumers.delete(stream, "memory");
    await jsm.consumers.add(stream, {
      durable_name: "memory",
      ack_policy: AckPolicy.None,
      filter_subject: subjects.memoryMessage,
    });
    await expect(provision(jsm, subjects, SETTINGS)).rejects.toThrow(
      new ProvisionError(
        `consumer memory on ${stream} differs from the contract: its ack policy is none (the contract: explicit); ` +
          `delete it (nats consumer rm ${stream} memory) and run toolbus provision again: the stream keeps the messages`,
      ),
    );
  });

  it("puts back a deleted memory consumer", async () => {
    const { jsm, subjects } = await fresh();
    await provision(jsm, subjects, SETTINGS);
    await jsm.consumers.delete(subjects.streams.memory.name, "memory");
    const report = await provision(jsm, subjects, SETTINGS);
    expect(report.created).toEqual([`${subjects.streams.memory.name}/memory`]);
  });
});

describe("verifyAssets", () => {
  it("passes for every identity on what the provisioner made", async () => {
    const { jsm, subjects } = await fresh();
    await provision(jsm, subjects, SETTINGS);
    for (const role of ["catalog", "dispatcher", "approvals", "memory", "gateway"] as const) {
      await verifyAssets(jsm, identityOf(role), subjects);
    }
    await verifyAssets(jsm, identityOf("connector", "github"), subjects);
  });

  it("refuses a missing stream, naming it and what to run", async () => {
    const { jsm, subjects } = await fresh();
    await provision(jsm, subjects, SETTINGS);
    const sessions = `KV_${internalSubjects(subjects.prefix).kv.gatewaySessions}`;
    await jsm.streams.delete(sessions);
    const refused = await verifyAssets(jsm, identityOf("gateway"), subjects).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AssetsNotProvisioned);
    expect((refused as AssetsNotProvisioned).problems).toEqual([`stream ${sessions} does not exist`]);
    expect((refused as Error).message).toBe(
      `the JetStream assets are not as the contract gives them: stream ${sessions} does not exist. ` +
        "Run `toolbus provision` (with the provisioner's identity on an authenticated bus) to create them and restore their configuration",
    );
    // Another identity that does not use the bucket is not held up by it.
    await verifyAssets(jsm, identityOf("dispatcher"), subjects);
  });

  it("lists every stream an identity uses when nothing was provisioned", async () => {
    const { jsm, subjects } = await fresh();
    const refused = await verifyAssets(jsm, identityOf("approvals"), subjects).catch(
      (error: unknown) => error,
    );
    expect((refused as AssetsNotProvisioned).problems).toEqual([
      `stream KV_${subjects.kv.approvalGrants} does not exist`,
      `stream KV_${internalSubjects(subjects.prefix).kv.approvalPolicy} does not exist`,
    ]);
  });

  it("refuses a stream that republishes its messages, naming the difference", async () => {
    const { jsm, subjects } = await fresh();
    await provision(jsm, subjects, SETTINGS);
    const name = subjects.streams.events.name;
    const { config } = await jsm.streams.info(name);
    // Made anew with it (JetStream 2.9 cannot add one to an existing stream).
    await jsm.streams.delete(name);
    const republish = { src: ">", dest: `${subjects.prefix}_copy.>` };
    await jsm.streams.add({ ...config, republish } as StreamConfig);
    const refused = await verifyAssets(jsm, identityOf("dispatcher"), subjects).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(AssetsNotProvisioned);
    expect((refused as AssetsNotProvisioned).problems).toEqual([
      `stream ${name}: republish is ${JSON.stringify((await jsm.streams.info(name)).config.republish)} (the contract: none)`,
    ]);
    expect((refused as Error).message).toContain(
      `stream ${name}: republish is {"src":">","dest":"${republish.dest}"`,
    );
  });

  it("refuses a stream whose subjects differ from the contract's", async () => {
    const { jsm, subjects } = await fresh();
    await provision(jsm, subjects, SETTINGS);
    const name = subjects.streams.memory.name;
    const { config } = await jsm.streams.info(name);
    const wider = [...(config.subjects ?? []), `${subjects.prefix}.approvals.>`];
    await jsm.streams.update(name, { ...config, subjects: wider });
    await expect(verifyAssets(jsm, identityOf("memory"), subjects)).rejects.toThrow(
      `stream ${name}: subjects are ${JSON.stringify([...wider].sort())} (the contract: ${JSON.stringify(config.subjects)})`,
    );
  });

  it("refuses to let the memory service start without its consumer", async () => {
    const { jsm, subjects } = await fresh();
    await provision(jsm, subjects, SETTINGS);
    const stream = subjects.streams.memory.name;
    await jsm.consumers.delete(stream, "memory");
    const refused = await verifyAssets(jsm, identityOf("memory"), subjects).catch((error: unknown) => error);
    expect((refused as AssetsNotProvisioned).problems).toEqual([
      `consumer memory on ${stream} does not exist`,
    ]);
  });
});

/** Whether this JetStream changes a stream's RePublish in an update (2.10 on; 2.9 refuses either way). */
function updatesRePublish(version: string): boolean {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  return major > 2 || (major === 2 && minor >= 10);
}

describe.each(natsServerBinaries())("provision on nats-server $version", ({ path, version }) => {
  it(
    updatesRePublish(version)
      ? "takes away a RePublish someone added to a stream"
      : "says plainly it cannot take away a RePublish, and how to make the stream anew",
    async () => {
      const server = await startNatsServer({ binary: path });
      cleanups.push(() => server.stop());
      const nc = await connect({ servers: server.url });
      cleanups.push(() => nc.close());
      expect(nc.info?.version).toBe(version);
      const jsm = await jetstreamManager(nc);
      const subjects = createSubjects("t_republish");
      await provision(jsm, subjects, SETTINGS);
      const name = subjects.streams.events.name;
      const { config } = await jsm.streams.info(name);
      const copying = { ...config, republish: { src: ">", dest: "t_stolen.>" } } as StreamConfig;
      if (updatesRePublish(version)) {
        await jsm.streams.update(name, copying);
        expect((await jsm.streams.info(name)).config.republish).toEqual({ src: ">", dest: "t_stolen.>" });
        const report = await provision(jsm, subjects, SETTINGS);
        expect(report.updated).toEqual([name]);
        expect((await jsm.streams.info(name)).config.republish).toBeUndefined();
        await verifyAssets(jsm, identityOf("dispatcher"), subjects);
      } else {
        // This JetStream refuses to add one to an existing stream too: it was made with it.
        await expect(jsm.streams.update(name, copying)).rejects.toThrow("can not change RePublish");
        await jsm.streams.delete(name);
        await jsm.streams.add(copying);
        await expect(provision(jsm, subjects, SETTINGS)).rejects.toThrow(
          new ProvisionError(
            `stream ${name} cannot be brought in line with the contract (stream configuration update can not change RePublish); ` +
              `change it back, or delete it (nats stream rm ${name}) if its data may go, and run toolbus provision again`,
          ),
        );
      }
    },
  );
});

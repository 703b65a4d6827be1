import { randomUUID } from "node:crypto";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CatalogStore } from "../../src/adapters/nats/catalog-store.js";

let nc: NatsConnection;
const buckets: string[] = [];

beforeAll(async () => {
  nc = await connect({ servers: process.env.NATS_URL });
});
afterAll(async () => {
  const kvm = new Kvm(nc);
  for (const bucket of buckets) await (await kvm.open(bucket)).destroy();
  await nc.close();
});

async function freshStore(): Promise<CatalogStore> {
  const bucket = `t_${randomUUID().slice(0, 8)}_catalog`;
  buckets.push(bucket);
  const kv = await new Kvm(nc).create(bucket);
  return new CatalogStore({
    js: jetstream(nc),
    jsm: await jetstreamManager(nc),
    kv,
    bucket,
    maxPayload: () => nc.info?.max_payload ?? 0,
  });
}

const base = {
  server: "docs",
  required: false,
  origin: "stdio",
  resourcesSupported: false,
  startupTimeoutMs: 30_000,
  toolTimeoutMs: 300_000,
  supportsParallelToolCalls: false,
};
const now = () => new Date().toISOString();

describe("catalog store", () => {
  it("stores an entry at the revision it is written at, and moves the server revision only when tools change", async () => {
    const store = await freshStore();
    const first = await store.apply(
      base,
      { status: "ready", tools: [{ name: "a", inputSchema: { type: "object" } }] },
      now,
    );
    expect(first.written).toBe(true);
    expect(first.entry.revision).toBe(await store.revision());

    const statusOnly = await store.apply(base, { status: "failed", statusError: "gone" }, now);
    expect(statusOnly.written).toBe(true);
    expect(statusOnly.entry.revision).toBe(first.entry.revision);
    expect(await store.revision()).toBeGreaterThan(first.entry.revision);

    const changed = await store.apply(
      base,
      {
        status: "ready",
        tools: [
          { name: "a", inputSchema: { type: "object" } },
          { name: "b", inputSchema: { type: "object" } },
        ],
      },
      now,
    );
    expect(changed.entry.revision).toBe(await store.revision());
    expect(changed.entry.revision).toBeGreaterThan(statusOnly.entry.revision);
    expect(await store.read("docs")).toEqual(changed.entry);
  });

  it("writes nothing when an unchanged listing arrives, also from several replicas at once", async () => {
    const store = await freshStore();
    await store.apply(
      base,
      { status: "ready", tools: [{ name: "a", inputSchema: { type: "object" } }] },
      now,
    );
    const before = await store.revision();
    const again = await store.apply(
      base,
      { status: "ready", tools: [{ name: "a", inputSchema: { type: "object" } }] },
      now,
    );
    expect(again.written).toBe(false);
    expect(await store.revision()).toBe(before);

    const change = {
      status: "ready" as const,
      tools: [
        { name: "a", inputSchema: { type: "object" } },
        { name: "c", inputSchema: { type: "object" } },
      ],
    };
    const replicas = await Promise.all(Array.from({ length: 5 }, () => store.apply(base, change, now)));
    expect(replicas.filter((r) => r.written)).toHaveLength(1);
    expect(await store.revision()).toBe(before + 1);
    expect(new Set(replicas.map((r) => r.entry.revision))).toEqual(new Set([before + 1]));
  });
});

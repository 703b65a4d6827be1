/**
 * The catalog follower the dispatcher and the gateway share: it reads every entry, follows each
 * change, and when its watch ends it follows the bucket again into a fresh copy, which replaces
 * the old one only once whole (an entry deleted meanwhile is gone) and keeps a key's last good
 * entry where the value read again is refused.
 */
import type { KV, KvWatchEntry } from "@nats-io/kv";
import type { QueuedIterator } from "@nats-io/nats-core";
import type { CatalogCopyUpdate, CatalogServerEntry } from "@toolbus/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { CatalogFollower } from "../src/catalog-follower.js";
import { LEVEL, startBus, uniqueName } from "./support.js";

const entry = (server: string, tool: string): CatalogServerEntry => ({
  server,
  status: "ready",
  required: false,
  revision: 1,
  origin: "stdio",
  tools: [{ name: tool, inputSchema: { type: "object" } }],
  resourcesSupported: false,
  listedAt: "2026-01-01T00:00:00.000Z",
});

const toolsOf = (follower: CatalogFollower) =>
  Object.fromEntries(
    [...(follower.copy?.entries.values() ?? [])].map((each) => [each.server, each.tools.map((t) => t.name)]),
  );

const followers: CatalogFollower[] = [];
afterEach(() => {
  for (const follower of followers.splice(0)) follower.stop();
});

describe("the catalog follower", () => {
  it("reads every entry, then follows each change, counting its revision", async () => {
    const { bus } = await startBus();
    const bucket = uniqueName("catalog");
    const kv = await bus.kvm().create(bucket, { history: 1 });
    await kv.put("server.files", JSON.stringify(entry("files", "read")));
    const updates: CatalogCopyUpdate[] = [];
    const follower = new CatalogFollower({
      bus,
      bucket,
      logger: bus.logger,
      changed: (update) => updates.push(update),
    });
    followers.push(follower);
    await follower.open();
    expect(toolsOf(follower)).toEqual({ files: ["read"] });

    const revision = await kv.put("server.mail", JSON.stringify(entry("mail", "send")));
    await expect.poll(() => follower.revision).toBe(revision);
    expect(toolsOf(follower)).toEqual({ files: ["read"], mail: ["send"] });
    expect(updates).toEqual([
      expect.objectContaining({ kind: "entry", server: "mail", previous: undefined }),
    ]);
    await (await bus.jsm()).streams.delete(`KV_${bucket}`);
  });

  it("stops quietly when its watch ends because the process drains its connection (no warning, no retry)", async () => {
    const { bus, lines } = await startBus();
    const bucket = uniqueName("catalog");
    await bus.kvm().create(bucket, { history: 1 });
    const follower = new CatalogFollower({ bus, bucket, logger: bus.logger, retryMaxMs: 1_000 });
    followers.push(follower);
    await follower.open();
    await bus.nc.drain();
    // Past the first retry's delay: a follower that took the drain for a failure has warned by now.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(
      lines.filter((line) => line.level >= LEVEL.warn && /catalog/.test(line.msg)).map((line) => line.msg),
    ).toEqual([]);
  });

  it("follows the bucket again when its watch ends: what was deleted meanwhile is gone, a refused entry keeps its last good value", async () => {
    const { bus, lines } = await startBus();
    const bucket = uniqueName("catalog");
    const kv = await bus.kvm().create(bucket, { history: 1 });
    await kv.put("server.files", JSON.stringify(entry("files", "read")));
    await kv.put("server.mail", JSON.stringify(entry("mail", "send")));
    // The real bucket, its watches kept at hand so the test can end one, as a server would.
    const watches: Array<QueuedIterator<KvWatchEntry>> = [];
    const watched = (real: KV): KV =>
      new Proxy(real, {
        get(target, property) {
          if (property === "watch") {
            return async (...args: Parameters<KV["watch"]>) => {
              const watch = await target.watch(...args);
              watches.push(watch);
              return watch;
            };
          }
          const value = Reflect.get(target, property);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
    let loads = 0;
    const follower = new CatalogFollower({
      bus: { kv: async (name) => watched(await bus.kv(name)), jsm: () => bus.jsm(), nc: bus.nc },
      bucket,
      logger: bus.logger,
      retryMaxMs: 1_000,
      loaded: () => loads++,
    });
    followers.push(follower);
    await follower.open();
    expect(toolsOf(follower)).toEqual({ files: ["read"], mail: ["send"] });

    watches[0]?.stop();
    await kv.delete("server.mail");
    await kv.put("server.files", "{not json");
    await kv.put("server.notes", JSON.stringify(entry("notes", "write")));
    // Only a new read sees `notes`: the watch that would have told of it has ended.
    await expect.poll(() => loads).toBe(2);
    expect(toolsOf(follower)).toEqual({ files: ["read"], notes: ["write"] });
    expect(lines.filter((line) => line.level === LEVEL.warn).map((line) => line.msg)).toEqual(
      expect.arrayContaining([
        "the catalog watch ended; following the bucket again",
        "refused a catalog value that fails its schema; keeping the last good one",
      ]),
    );
    await (await bus.jsm()).streams.delete(`KV_${bucket}`);
  });
});

// Scaling per connector: two replicas serving one server (one write per change, calls spread
// over both, the barrier current on both), and replicas each serving a subset (`--servers`).
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type StdioTestServer,
  startTestServer,
  type TestServerScript,
} from "@toolbus/testkit/mcp-test-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CatalogHarness, eventually, type RunningService, toolbusToml } from "./support/harness.js";
import { rawServer } from "./support/raw-server.js";

/** The same listing from both replicas' servers; only what `who` answers tells them apart. */
const scriptAnswering = (who: string, extra: string[] = []): TestServerScript => ({
  tools: [{ name: "who", behavior: { kind: "text", text: who } }, ...extra.map((name) => ({ name }))],
});

describe("two replicas of one server", () => {
  let harness: CatalogHarness;
  let first: StdioTestServer;
  let second: StdioTestServer;
  let replicas: RunningService[];

  beforeAll(async () => {
    harness = await CatalogHarness.create("replicas");
    first = await startTestServer({ transport: "stdio", script: scriptAnswering("first") });
    second = await startTestServer({ transport: "stdio", script: scriptAnswering("second") });
    harness.defer(() => first.dispose());
    harness.defer(() => second.dispose());
    const one = await harness.start(
      toolbusToml({ servers: { srv: { command: first.command, args: first.args } } }),
    );
    expect(await one.service.startup).toEqual({ ready: ["srv"], failed: [], cancelled: [] });
    replicas = [one];
  }, 60_000);
  afterAll(async () => {
    await harness?.close();
  });

  it("writes nothing when a second replica comes up for a server already served", async () => {
    const before = await harness.revision();
    const entry = await harness.entry("srv");
    const two = await harness.start(
      toolbusToml({ servers: { srv: { command: second.command, args: second.args } } }),
    );
    replicas.push(two);
    expect(await two.service.startup).toEqual({ ready: ["srv"], failed: [], cancelled: [] });

    expect(await harness.revision()).toBe(before);
    expect(await harness.entry("srv")).toEqual(entry);
  });

  it("spreads calls over both replicas", async () => {
    const revision = (await harness.entry("srv"))!.revision;
    const answers = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const reply = await harness.ok<{ result: { content: Array<{ text: string }> } }>(
          harness.subjects.connectorCall("srv"),
          { callId: `spread-${i}`, tool: "who", preparedRevision: revision },
        );
        return reply.result.content[0]!.text;
      }),
    );
    const counts = { first: 0, second: 0 };
    for (const answer of answers) counts[answer as keyof typeof counts]++;
    expect(counts.first + counts.second).toBe(40);
    expect(counts.first).toBeGreaterThan(0);
    expect(counts.second).toBeGreaterThan(0);
  });

  it("writes a change both replicas list exactly once, and both hold calls to the new revision", async () => {
    const before = await harness.revision();
    const announced = harness.eventsOn(harness.subjects.catalogEvent).length;
    const relisted = replicas.map((r) => r.logs.filter((line) => line.msg === "tools re-listed").length);

    await Promise.all([
      first.setScript(scriptAnswering("first", ["added"])),
      second.setScript(scriptAnswering("second", ["added"])),
    ]);
    await eventually("both replicas re-listing", () =>
      replicas.every((r, i) => r.logs.filter((line) => line.msg === "tools re-listed").length > relisted[i]!)
        ? true
        : undefined,
    );

    expect(await harness.revision()).toBe(before + 1);
    const entry = await harness.entry("srv");
    expect(entry?.tools.map((tool) => tool.name)).toEqual(["who", "added"]);
    expect(entry?.revision).toBe(before + 1);
    await eventually("the catalog event", () =>
      harness.eventsOn(harness.subjects.catalogEvent).length > announced ? true : undefined,
    );
    expect(harness.eventsOn(harness.subjects.catalogEvent).slice(announced)).toEqual([
      { revision: before + 1, changed: ["srv"] },
    ]);
    await eventually("both barriers at the new revision", () =>
      replicas.every((r) => r.service.connectors.get("srv")?.currentRevision === before + 1)
        ? true
        : undefined,
    );

    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        harness.request(harness.subjects.connectorCall("srv"), {
          callId: `after-change-${i}`,
          tool: "added",
          preparedRevision: before + 1,
        }),
      ),
    );
    expect(replies.filter((reply) => !reply.ok)).toEqual([]);
  });
});

describe("replicas serving a subset of the servers", () => {
  let harness: CatalogHarness;
  let marker: string;

  beforeAll(async () => {
    harness = await CatalogHarness.create("subset");
    const dir = await mkdtemp(join(tmpdir(), "toolbus-subset-"));
    harness.defer(() => rm(dir, { recursive: true, force: true }));
    marker = join(dir, "spawned");
  });
  afterAll(async () => {
    await harness?.close();
  });

  async function config() {
    const b = await rawServer({ toolPages: [{ tools: [{ name: "bee", inputSchema: { type: "object" } }] }] });
    const c = await rawServer({ toolPages: [{ tools: [{ name: "sea", inputSchema: { type: "object" } }] }] });
    harness.defer(() => b.dispose());
    harness.defer(() => c.dispose());
    return toolbusToml({
      servers: {
        a: {
          command: process.execPath,
          args: ["-e", "require('fs').writeFileSync(process.argv[1], 'x')", marker],
        },
        b: { command: b.command, args: b.args },
        c: { command: c.command, args: c.args },
      },
    });
  }

  it("starts only the servers it is given, and answers for every server through their owners", async () => {
    const text = await config();
    const onlyB = await harness.start(text, { servers: ["b"] });
    expect(await onlyB.service.startup).toEqual({ ready: ["b"], failed: [], cancelled: [] });
    expect([...onlyB.service.connectors.keys()]).toEqual(["b"]);
    expect((await harness.catalog()).servers.map((s) => s.name)).toEqual(["b"]);
    expect(existsSync(marker)).toBe(false);
    await expect(
      harness.request(harness.subjects.connectorCall("a"), {
        callId: "to-a",
        tool: "x",
        preparedRevision: 1,
      }),
    ).rejects.toThrow(`no responders: '${harness.subjects.connectorCall("a")}'`);

    const onlyC = await harness.start(text, { servers: ["c"] });
    expect(await onlyC.service.startup).toEqual({ ready: ["c"], failed: [], cancelled: [] });
    expect((await harness.catalog()).tools.map((t) => [t.server, t.rawName])).toEqual([
      ["b", "bee"],
      ["c", "sea"],
    ]);
    // Whichever replica takes the request, the owner of each server re-lists it.
    const revision = await harness.revision();
    for (let i = 0; i < 10; i++) {
      expect(await harness.request(harness.subjects.catalogRefresh, { server: i % 2 ? "b" : "c" })).toEqual({
        ok: true,
        result: { revision },
      });
    }
  });

  it("refuses to start with a server the config does not have", async () => {
    await expect(harness.start(await config(), { servers: ["b", "zzz"] })).rejects.toThrow(
      "--servers names 'zzz', not configured in /test/toolbus.toml; configured: a, b, c",
    );
  });
});

describe("restarting the catalog service", () => {
  let harness: CatalogHarness;
  beforeAll(async () => {
    harness = await CatalogHarness.create("restart");
  });
  afterAll(async () => {
    await harness?.close();
  });

  async function serving(tools: string[]) {
    const server = await rawServer({
      toolPages: [{ tools: tools.map((name) => ({ name, inputSchema: { type: "object" } })) }],
    });
    harness.defer(() => server.dispose());
    return toolbusToml({ servers: { srv: { command: server.command, args: server.args } } });
  }

  it("moves revisions only forward across restarts, and writes nothing when nothing changed", async () => {
    const first = await harness.start(await serving(["a"]));
    await first.service.startup;
    const before = await harness.entry("srv");
    await first.stop();

    // The server's tools changed while the catalog was down.
    const second = await harness.start(await serving(["a", "b"]));
    expect(await second.service.startup).toEqual({ ready: ["srv"], failed: [], cancelled: [] });
    const after = await harness.entry("srv");
    expect(after?.tools.map((t) => t.name)).toEqual(["a", "b"]);
    expect(after!.revision).toBeGreaterThan(before!.revision);
    expect(after!.revision).toBe(await harness.revision());
    await second.stop();

    const unchanged = await harness.start(await serving(["a", "b"]));
    await unchanged.service.startup;
    expect(await harness.revision()).toBe(after!.revision);
    expect(await harness.entry("srv")).toEqual(after);
  });
});

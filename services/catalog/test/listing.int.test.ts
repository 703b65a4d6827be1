// Listing through real servers: pagination limits and the legacy protocol (checklist 13–14),
// the names catalog.get gives (15–24), re-listing on list_changed, and bad listings.
import type { CatalogSnapshot } from "@toolbus/protocol";
import {
  type StdioTestServer,
  startTestServer,
  type TestServerScript,
} from "@toolbus/testkit/mcp-test-server";
import { afterEach, describe, expect, it } from "vitest";
import { CatalogHarness, eventually, toolbusToml } from "./support/harness.js";
import { type RawServerScript, rawServer } from "./support/raw-server.js";

let harness: CatalogHarness;
afterEach(async () => {
  await harness?.close();
});

async function testServer(script: TestServerScript): Promise<StdioTestServer> {
  const server = await startTestServer({ transport: "stdio", script });
  harness.defer(() => server.dispose());
  return server;
}

/** A hand-written server (fast to start) listing `pages` of tools as given. */
async function raw(script: RawServerScript) {
  const server = await rawServer(script);
  harness.defer(() => server.dispose());
  return server;
}

/** Tools as a server lists them: an object input schema unless one is given. */
function listed(...tools: Array<string | Record<string, unknown>>) {
  return tools.map((tool) =>
    typeof tool === "string"
      ? { name: tool, inputSchema: { type: "object" } }
      : { inputSchema: { type: "object" }, ...tool },
  );
}

/** `count` generated tools `t0000…` in pages of `size`, cursors being the offsets. */
function pagesOf(count: number, size: number): RawServerScript["toolPages"] {
  const names = Array.from({ length: count }, (_, i) => `t${String(i).padStart(4, "0")}`);
  return Array.from({ length: Math.ceil(count / size) }, (_, page) => ({
    ...(page === 0 ? {} : { cursor: String(page * size) }),
    tools: listed(...names.slice(page * size, (page + 1) * size)),
    ...((page + 1) * size < count ? { nextCursor: String((page + 1) * size) } : {}),
  }));
}

/**
 * How many catalog events the harness has seen once the one announcing `revision` is among them:
 * the announcement travels apart from the KV write that `harness.revision()` read.
 */
async function announcedAt(revision: number): Promise<number> {
  const events = () => harness.eventsOn(harness.subjects.catalogEvent);
  await eventually(`the catalog event of revision ${revision}`, () =>
    events().some((event) => event.revision === revision) ? true : undefined,
  );
  return events().length;
}

const stdio = (server: { command: string; args: string[] }) => ({
  command: server.command,
  args: server.args,
});

describe("listing tools", () => {
  it("[13] follows pages, and fails a listing past the reference's limits with its messages", {
    timeout: 90_000,
  }, async () => {
    harness = await CatalogHarness.create("listing");
    const { service } = await harness.start(
      toolbusToml({
        servers: {
          paged: stdio(await raw({ toolPages: pagesOf(250, 100) })),
          loop: stdio(await testServer({ tools: [{ name: "echo" }], cursorLoop: true })),
          pages: stdio(await raw({ toolPages: pagesOf(1010, 10) })),
          items: stdio(await testServer({ toolCount: 3000, toolsPageSize: 100 })),
          tenk: stdio(await raw({ toolPages: pagesOf(10_000, 10_000) })),
          cursor: stdio(await raw({ toolPages: [{ tools: listed("a"), nextCursor: "c".repeat(70_000) }] })),
        },
      }),
    );

    const errors = {
      cursor: "tools/list returned a pagination cursor exceeding 65536 bytes",
      items: "tools/list exceeded the catalog limit of 2048 items",
      loop: "tools/list returned a repeated pagination cursor",
      pages: "tools/list exceeded the pagination limit of 100 pages",
      tenk: "tools/list exceeded the catalog limit of 2048 items",
    };
    expect(await service.startup).toEqual({
      ready: ["paged"],
      failed: Object.entries(errors).map(([server, error]) => ({ server, error })),
      cancelled: [],
    });
    const catalog = await harness.catalog();
    expect(catalog.servers.filter((s) => s.status === "failed").map((s) => [s.name, s.error])).toEqual(
      Object.entries(errors).map(([server, error]) => [
        server,
        `MCP client for \`${server}\` failed to start: ${error}`,
      ]),
    );
    expect(catalog.tools.map((tool) => tool.rawName)).toEqual(
      Array.from({ length: 250 }, (_, i) => `t${String(i).padStart(4, "0")}`),
    );
  });

  it("[14] reads one page of tools under the 2025-06-18 protocol, yet follows resource cursors, the empty one too", async () => {
    harness = await CatalogHarness.create("listing");
    const legacy = await raw({
      protocolVersion: "2025-06-18",
      toolPages: [
        { tools: listed("first"), nextCursor: "next" },
        { cursor: "next", tools: listed("second") },
      ],
      resourcePages: [
        { resources: [{ uri: "raw://one", name: "one" }], nextCursor: "" },
        { cursor: "", resources: [{ uri: "raw://two", name: "two" }] },
      ],
    });
    const { service } = await harness.start(toolbusToml({ servers: { legacy: stdio(legacy) } }));
    expect(await service.startup).toEqual({ ready: ["legacy"], failed: [], cancelled: [] });

    expect((await harness.catalog()).tools.map((tool) => tool.rawName)).toEqual(["first"]);
    expect(await harness.ok(harness.subjects.catalogResourcesList, {})).toEqual({
      resources: [
        { server: "legacy", uri: "raw://one", name: "one" },
        { server: "legacy", uri: "raw://two", name: "two" },
      ],
    });
    const listings = (await legacy.requests()).filter((r) => r.method.endsWith("/list"));
    expect(listings).toEqual([
      { method: "tools/list", params: {} },
      { method: "resources/list", params: {} },
      { method: "resources/list", params: { cursor: "" } },
    ]);
  });

  it("[15, 16, 17, 19, 21, 22, 23][18 differs] names tools the reference's way across servers, in raw-identity order", async () => {
    harness = await CatalogHarness.create("listing");
    const fits = "f".repeat(64 - "mcp__srv__".length);
    const { service } = await harness.start(
      toolbusToml({
        catalog: { non_prefixed_servers: ["plain"] },
        servers: {
          srv: stdio(
            await raw({
              toolPages: [
                {
                  tools: listed(
                    "tool.two-three",
                    { name: "foo", annotations: { readOnlyHint: true } },
                    "tool_name",
                    "tool-name",
                    { name: "foo", annotations: { readOnlyHint: true } },
                    "données",
                    "日本語🔧",
                    fits,
                    `${fits}g`,
                    "x".repeat(1000),
                    { name: "app-only", _meta: { ui: { visibility: ["app"] } } },
                    { name: "nulled", inputSchema: { type: "object", properties: null } },
                    { name: "null-root", inputSchema: { type: "null" } },
                  ),
                },
              ],
            }),
          ),
          plain: stdio(await raw({ toolPages: [{ tools: listed("foo") }] })),
          mcp__pre: stdio(await raw({ toolPages: [{ tools: listed("foo") }] })),
          "basic-server": stdio(await raw({ toolPages: [{ tools: listed("x") }] })),
          basic_server: stdio(await raw({ toolPages: [{ tools: listed("x") }] })),
          memory: stdio(await raw({ toolPages: [{ tools: listed("create_entities") }] })),
          par: {
            ...stdio(await raw({ toolPages: [{ tools: listed("go") }] })),
            supports_parallel_tool_calls: true,
          },
        },
      }),
    );
    await service.startup;

    const all = await harness.catalog("all");
    const hashed = (base: string) => expect.stringMatching(new RegExp(`^${base}_[0-9a-f]{12}$`));
    const tool = (
      server: string,
      rawName: string,
      callableNamespace: string,
      callableName: unknown,
      extra: { supportsParallel?: boolean; exposure?: string } = {},
    ) => ({
      server,
      rawName,
      callableNamespace,
      callableName,
      supportsParallel: extra.supportsParallel ?? false,
      exposure: extra.exposure ?? "direct",
    });
    const basicDash = hashed("mcp__basic_server");
    expect(
      all.tools.map((t) => ({
        server: t.server,
        rawName: t.rawName,
        callableNamespace: t.callableNamespace,
        callableName: t.callableName,
        supportsParallel: t.supportsParallel,
        exposure: t.exposure,
      })),
    ).toEqual([
      tool("basic-server", "x", basicDash, "x"),
      tool("basic_server", "x", hashed("mcp__basic_server"), "x"),
      tool("mcp__pre", "foo", "mcp__pre", "foo"),
      tool("memory", "create_entities", "mcp__memory", "create_entities"),
      tool("par", "go", "mcp__par", "go", { supportsParallel: true }),
      tool("plain", "foo", "plain", "foo"),
      tool("srv", "app-only", "mcp__srv", "app_only", { exposure: "hidden" }),
      tool("srv", "donn\u00e9es", "mcp__srv", "donn_es"),
      tool("srv", fits, "mcp__srv", fits),
      tool("srv", `${fits}g`, "mcp__srv", hashed(fits.slice(0, 64 - 10 - 13))),
      tool("srv", "foo", "mcp__srv", "foo", { supportsParallel: true }),
      tool("srv", "nulled", "mcp__srv", "nulled"),
      tool("srv", "tool-name", "mcp__srv", hashed("tool_name")),
      tool("srv", "tool.two-three", "mcp__srv", "tool_two_three"),
      tool("srv", "tool_name", "mcp__srv", hashed("tool_name")),
      tool("srv", "x".repeat(1000), "mcp__srv", hashed("x".repeat(64 - 10 - 13))),
      tool("srv", "日本語🔧", "mcp__srv", "____"),
    ]);
    const byRaw = new Map(all.tools.map((t) => [`${t.server}/${t.rawName}`, t]));
    // Hashing keeps colliding names apart and cuts long ones to exactly the limit.
    expect(byRaw.get("basic-server/x")!.callableNamespace).not.toBe(
      byRaw.get("basic_server/x")!.callableNamespace,
    );
    expect(byRaw.get("srv/tool-name")!.callableName).not.toBe(byRaw.get("srv/tool_name")!.callableName);
    expect(Buffer.byteLength(byRaw.get(`srv/${"x".repeat(1000)}`)!.flatName)).toBe(64);
    expect(Buffer.byteLength(byRaw.get(`srv/${fits}g`)!.flatName)).toBe(64);
    expect(byRaw.get(`srv/${fits}`)!.flatName).toBe(`mcp__srv__${fits}`);
    expect(
      ["memory/create_entities", "srv/tool.two-three", "plain/foo", "mcp__pre/foo"].map((key) => [
        byRaw.get(key)!.flatName,
        byRaw.get(key)!.hookName,
      ]),
    ).toEqual([
      ["mcp__memory__create_entities", "mcp__memory__create_entities"],
      ["mcp__srv__tool_two_three", "mcp__srv__tool_two_three"],
      ["plain__foo", "mcp__plain__foo"],
      ["mcp__pre__foo", "mcp__pre__foo"],
    ]);
    expect(byRaw.get("srv/nulled")!.inputSchema).toEqual({ type: "object", properties: {} });
    expect(new Set(all.tools.map((t) => t.flatName)).size).toBe(all.tools.length);

    const model = await harness.catalog("model");
    // A request without `exposure` gets the model view.
    expect(await harness.ok<CatalogSnapshot>(harness.subjects.catalogGet, {})).toEqual(model);
    expect(model.tools.map((t) => t.rawName)).toEqual(
      all.tools.filter((t) => t.rawName !== "app-only").map((t) => t.rawName),
    );
    expect(model.direct).toEqual(model.tools.map((t) => t.flatName));
    expect(model.deferred).toEqual([]);
  });

  it("[24 differs] offers tools directly, and deferred to a consumer that searches, as omit_tools_from allows", async () => {
    harness = await CatalogHarness.create("listing");
    const toolPages = [{ tools: listed({ name: "lookup", description: "Find a record." }) }];
    const { service } = await harness.start(
      toolbusToml({
        servers: {
          open: stdio(await raw({ toolPages })),
          nodeferred: { ...stdio(await raw({ toolPages })), omit_tools_from: ["deferred"] },
          nodirect: { ...stdio(await raw({ toolPages })), omit_tools_from: ["direct"] },
          nowhere: {
            ...stdio(await raw({ toolPages })),
            omit_tools_from: ["direct", "deferred", "code_mode"],
          },
        },
      }),
    );
    await service.startup;

    // The table of docs/reference-behavior.md §3.6, without search and with it.
    expect((await harness.catalog("all")).tools.map((t) => [t.server, t.exposure])).toEqual([
      ["nodeferred", "direct"],
      ["nodirect", "code_mode_only"],
      ["nowhere", "hidden"],
      ["open", "direct"],
    ]);
    const found = await harness.ok<{ tools: Array<{ server: string; exposure: string }> }>(
      harness.subjects.catalogSearch,
      { query: "record" },
    );
    expect(found.tools.map((t) => [t.server, t.exposure])).toEqual([
      ["nodeferred", "direct"],
      ["nodirect", "deferred"],
      ["open", "deferred"],
    ]);
  });

  it("writes a new revision and announces it when a server's tools change", async () => {
    harness = await CatalogHarness.create("listing");
    const server = await testServer({ tools: [{ name: "echo" }] });
    const { service } = await harness.start(toolbusToml({ servers: { srv: stdio(server) } }));
    await service.startup;
    const before = await harness.revision();
    const announced = await announcedAt(before);

    await server.setScript({ tools: [{ name: "echo" }, { name: "added" }] });
    const entry = await eventually("the re-listed entry", async () => {
      const current = await harness.entry("srv");
      return current?.tools.length === 2 ? current : undefined;
    });

    expect(entry.revision).toBe(before + 1);
    expect(await harness.revision()).toBe(before + 1);
    await eventually("the catalog event", () =>
      harness.eventsOn(harness.subjects.catalogEvent).length > announced ? true : undefined,
    );
    expect(harness.eventsOn(harness.subjects.catalogEvent).slice(announced)).toEqual([
      { revision: before + 1, changed: ["srv"] },
    ]);
    const catalog = await harness.catalog();
    expect(catalog.revision).toBe(before + 1);
    expect(catalog.tools.map((t) => [t.rawName, t.revision])).toEqual([
      ["added", before + 1],
      ["echo", before + 1],
    ]);
  });

  it("writes nothing when a re-listing finds the same tools", async () => {
    harness = await CatalogHarness.create("listing");
    const server = await testServer({ tools: [{ name: "echo" }] });
    const { service } = await harness.start(toolbusToml({ servers: { srv: stdio(server) } }));
    await service.startup;
    const before = await harness.revision();
    const entryBefore = await harness.entry("srv");
    const announced = await announcedAt(before);

    // A behaviour change lists the same tools; then an explicit refresh lists them again.
    await server.setScript({ tools: [{ name: "echo", behavior: { kind: "text", text: "changed" } }] });
    expect(await harness.ok(harness.subjects.catalogRefresh, { server: "srv" })).toEqual({
      revision: before,
    });
    expect(await harness.ok(harness.subjects.catalogRefresh, {})).toEqual({ revision: before });

    expect(await harness.revision()).toBe(before);
    expect(await harness.entry("srv")).toEqual(entryBefore);
    expect(harness.eventsOn(harness.subjects.catalogEvent).length).toBe(announced);
  });

  it("keeps a server's instructions in its entry, as the namespace description's source", async () => {
    harness = await CatalogHarness.create("listing");
    const instructions = "  Tools for the docs site.\nSearch before you fetch.  ";
    const { service } = await harness.start(
      toolbusToml({
        servers: {
          told: stdio(await raw({ instructions, toolPages: [{ tools: listed("search") }] })),
          silent: stdio(await raw({ toolPages: [{ tools: listed("search") }] })),
        },
      }),
    );
    await service.startup;
    expect((await harness.entry("told"))?.instructions).toBe(instructions);
    expect(await harness.entry("silent")).not.toHaveProperty("instructions");
  });

  it("leaves malformed tools out, keeps the rest, and says so in the log", async () => {
    harness = await CatalogHarness.create("listing");
    const server = await testServer({
      invalidToolSchemas: true,
      tools: [
        { name: "good", inputSchema: { type: "object", properties: { q: { type: "string" } } } },
        { name: "no-schema" },
        { name: "text-schema", inputSchema: "a string" },
      ],
    });
    const { service, logs } = await harness.start(toolbusToml({ servers: { srv: stdio(server) } }));
    expect(await service.startup).toEqual({ ready: ["srv"], failed: [], cancelled: [] });

    expect((await harness.catalog()).tools.map((t) => [t.rawName, t.inputSchema])).toEqual([
      ["good", { type: "object", properties: { q: { type: "string" } } }],
    ]);
    const warning = logs.find(
      (line) => line.msg === "the server listed malformed tools; they are left out of the catalog",
    );
    expect(warning).toMatchObject({ server: "srv", count: 1 });
    // A schema that is there but not an object is the reference's conversion failure (checklist 21).
    expect(logs.filter((line) => String(line.msg).startsWith("Failed to convert"))).toEqual([
      expect.objectContaining({
        level: 40,
        server: "srv",
        msg: "Failed to convert `text-schema` MCP tool to OpenAI tool: the input schema is a string, not a JSON object",
      }),
    ]);
  });
});

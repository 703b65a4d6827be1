/**
 * The resources/read handler over a scripted catalog port (the bus seam): when it lists the
 * servers again, what it warns about, and what a client is answered. Routing itself is in
 * core/resource-routing.test.ts; the real catalog and servers in resource-routing.int.test.ts.
 */
import {
  type ResourcesReadResult,
  type ServerResource,
  type ServerResourceTemplate,
  WireError,
} from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import type { DroppedTemplates } from "../src/core/resource-routing.js";
import { resourceHandlers } from "../src/handlers/resources.js";
import type { ResourcesPort } from "../src/ports.js";

function catalog() {
  const state = {
    resources: [] as ServerResource[],
    templates: [] as ServerResourceTemplate[],
    listings: 0,
    reads: [] as Array<{ server: string; uri: string }>,
    failRead: undefined as WireError | undefined,
  };
  const port: ResourcesPort = {
    async list() {
      state.listings += 1;
      return state.resources;
    },
    async templates() {
      return state.templates;
    },
    async read(server, uri): Promise<ResourcesReadResult> {
      state.reads.push({ server, uri });
      if (state.failRead) throw state.failRead;
      return { server, uri, contents: [{ uri, text: `${server} read it` }] };
    },
  };
  return { state, port };
}

function handlers(port: ResourcesPort) {
  let now = 0;
  const warnings: DroppedTemplates[] = [];
  const resources = resourceHandlers({
    resources: port,
    directoryTtlMs: 30_000,
    now: () => now,
    warn: (dropped) => warnings.push(dropped),
    limits: { templatesPerServer: 1, templateLength: 40, uriLength: 100 },
  });
  return { resources, warnings, advance: (ms: number) => (now += ms) };
}

describe("resources/read", () => {
  it("finds a URI a server listed since the directory was built by listing once more", async () => {
    const { state, port } = catalog();
    const { resources, advance } = handlers(port);
    state.resources = [{ server: "a", uri: "a://1", name: "one" }];
    await resources.read("a://1");
    state.resources.push({ server: "b", uri: "b://2", name: "two" });
    advance(1_000);
    expect(await resources.read("b://2")).toEqual({ contents: [{ uri: "b://2", text: "b read it" }] });
    expect(state.listings).toBe(2);
  });

  it("refuses an unknown URI without listing again when the directory is less than a second old", async () => {
    const { state, port } = catalog();
    const { resources, advance } = handlers(port);
    state.resources = [{ server: "a", uri: "a://1", name: "one" }];
    await resources.read("a://1");
    advance(999);
    for (let i = 0; i < 5; i++) {
      await expect(resources.read(`none://${i}`)).rejects.toMatchObject({ code: -32602 });
    }
    expect(state.listings).toBe(1);
    expect(state.reads.map((read) => read.uri)).toEqual(["a://1"]);
  });

  it("lists once for reads that arrive together", async () => {
    const { state, port } = catalog();
    const { resources } = handlers(port);
    state.resources = [{ server: "a", uri: "a://1", name: "one" }];
    await Promise.all([resources.read("a://1"), resources.read("a://1"), resources.read("a://1")]);
    expect(state.listings).toBe(1);
  });

  it("refuses a URI over the limit without listing or reading", async () => {
    const { state, port } = catalog();
    const { resources } = handlers(port);
    await expect(resources.read(`a://${"x".repeat(97)}`)).rejects.toMatchObject({
      code: -32602,
      message:
        "Resource URI too long: 101 characters, more than the 100 toolbus routes. Read it with the read_mcp_resource tool, which names its server",
    });
    expect(state.listings).toBe(0);
    expect(state.reads).toEqual([]);
  });

  it("answers a routed server's failure with -32602 naming the server", async () => {
    const { state, port } = catalog();
    const { resources } = handlers(port);
    state.templates = [{ server: "a", uriTemplate: "a://{n}", name: "n" }];
    state.failRead = new WireError("transport_error", "resources/read failed: Resource not found: a://9");
    await expect(resources.read("a://9")).rejects.toMatchObject({
      code: -32602,
      message:
        "Resource a://9 could not be read from MCP server 'a': resources/read failed: Resource not found: a://9",
    });
    expect(state.reads).toEqual([{ server: "a", uri: "a://9" }]);
  });
});

describe("templates past the caps", () => {
  it("are left out of resources/templates/list, with one warning per server and cap however often it lists", async () => {
    const { state, port } = catalog();
    const { resources, warnings, advance } = handlers(port);
    state.templates = [
      { server: "s", uriTemplate: "a://{n}", name: "kept" },
      { server: "s", uriTemplate: "b://{n}", name: "one too many" },
      { server: "s", uriTemplate: `c://${"{n}".repeat(20)}`, name: "too long" },
    ];
    expect((await resources.templates()).resourceTemplates.map((t) => t.name)).toEqual(["kept"]);
    await resources.templates();
    advance(60_000);
    await expect(resources.read("b://1")).rejects.toMatchObject({ code: -32602 });
    expect(warnings.map(({ server, reason, count }) => ({ server, reason, count }))).toEqual([
      { server: "s", reason: "too_long", count: 1 },
      { server: "s", reason: "too_many", count: 1 },
    ]);
  });
});

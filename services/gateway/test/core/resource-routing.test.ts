import { describe, expect, it } from "vitest";
import {
  type KnownResources,
  RESOURCE_ROUTING_LIMITS,
  type ResourceRoutingLimits,
  resourceDirectory,
  routableTemplates,
  routeResource,
} from "../../src/core/resource-routing.js";

const route = (uri: string, known: KnownResources, limits?: ResourceRoutingLimits) =>
  routeResource(uri, resourceDirectory(known, limits));

const KNOWN: KnownResources = {
  resources: [
    { uri: "demo://a", server: "zeta" },
    { uri: "demo://x/7", server: "mid" },
    { uri: "shared://readme", server: "beta" },
    { uri: "shared://readme", server: "alpha" },
  ],
  templates: [
    { uriTemplate: "demo://x/{id}", server: "tmpl" },
    { uriTemplate: "other://{id}", server: "alpha" },
    { uriTemplate: "files:///{+path}", server: "disk" },
    { uriTemplate: "files:///home/{user}", server: "home" },
    { uriTemplate: "files:///home/{user}/notes", server: "home" },
  ],
};

describe("resource routing", () => {
  it("sends a listed URI to the server that listed it, even when another server's template matches it", async () => {
    expect(await route("demo://x/7", KNOWN)).toEqual({ kind: "server", server: "mid", by: "listing" });
  });

  it("sends an unlisted URI to the one server whose template matches it", async () => {
    expect(await route("demo://x/8", KNOWN)).toEqual({ kind: "server", server: "tmpl", by: "template" });
    expect(await route("other://q", KNOWN)).toEqual({ kind: "server", server: "alpha", by: "template" });
  });

  it("counts a server whose several templates match once", async () => {
    const known = { resources: [], templates: KNOWN.templates.filter((t) => t.server === "home") };
    expect(await route("files:///home/me", known)).toEqual({
      kind: "server",
      server: "home",
      by: "template",
    });
  });

  it("refuses a URI two servers list, naming both", async () => {
    expect(await route("shared://readme", KNOWN)).toEqual({
      kind: "refused",
      reason: "listed_twice",
      message:
        "Resource shared://readme is listed by more than one server (alpha, beta); toolbus cannot tell which to read. Read it with the read_mcp_resource tool, naming the server",
    });
  });

  it("refuses a URI templates of two servers match, naming both and their templates", async () => {
    expect(await route("files:///home/me", KNOWN)).toEqual({
      kind: "refused",
      reason: "matched_twice",
      message:
        "Resource files:///home/me matches resource templates of more than one server: disk (files:///{+path}), home (files:///home/{user}); toolbus cannot tell which to read. Read it with the read_mcp_resource tool, naming the server",
    });
  });

  it("refuses a URI no server lists or matches, and says what to do", async () => {
    expect(await route("nowhere://nothing", KNOWN)).toEqual({
      kind: "refused",
      reason: "unknown",
      message:
        "Resource not found: nowhere://nothing. No server toolbus serves lists it or has a template matching it; call resources/list and resources/templates/list for what can be read",
    });
    expect((await route("demo://x", { resources: [], templates: [] })).kind).toBe("refused");
  });

  it("refuses a URI longer than the limit, naming the limit, before looking it up", async () => {
    const limits = { ...RESOURCE_ROUTING_LIMITS, uriLength: 20 };
    const atLimit = `demo://${"a".repeat(13)}`;
    const overLimit = `${atLimit}a`;
    const known = {
      resources: [
        { uri: atLimit, server: "s" },
        { uri: overLimit, server: "s" },
      ],
      templates: [],
    };
    expect(await route(atLimit, known, limits)).toMatchObject({ kind: "server", server: "s" });
    expect(await route(overLimit, known, limits)).toEqual({
      kind: "refused",
      reason: "uri_too_long",
      message:
        "Resource URI too long: 21 characters, more than the 20 toolbus routes. Read it with the read_mcp_resource tool, which names its server",
    });
  });

  it("pauses between template matches, so other work can run", async () => {
    const templates = Array.from({ length: 5 }, (_, i) => ({ uriTemplate: `t${i}://{x}`, server: `s${i}` }));
    let pauses = 0;
    const routed = await routeResource(
      "t4://y",
      resourceDirectory({ resources: [], templates }),
      async () => {
        pauses += 1;
      },
    );
    expect(routed).toEqual({ kind: "server", server: "s4", by: "template" });
    expect(pauses).toBe(5);
  });

  it("matches a template a server lists twice once", async () => {
    const templates = [
      { uriTemplate: "t://{x}", server: "s" },
      { uriTemplate: "t://{x}", server: "s" },
      { uriTemplate: "u://{x}", server: "s" },
    ];
    let pauses = 0;
    const routed = await routeResource(
      "none://x",
      resourceDirectory({ resources: [], templates }),
      async () => {
        pauses += 1;
      },
    );
    expect(routed).toMatchObject({ reason: "unknown" });
    expect(pauses).toBe(2);
  });

  it("reuses the matchers of templates a server still lists when the directory is built again", () => {
    const first = resourceDirectory({
      resources: [],
      templates: [
        { uriTemplate: "t://{x}", server: "s" },
        { uriTemplate: "old://{x}", server: "s" },
      ],
    });
    const second = resourceDirectory(
      {
        resources: [],
        templates: [
          { uriTemplate: "t://{x}", server: "s" },
          { uriTemplate: "t://{x}", server: "other" },
        ],
      },
      RESOURCE_ROUTING_LIMITS,
      first,
    );
    const [other, s] = second.templates;
    expect(s?.matchers[0]).toBe(first.templates[0]?.matchers[0]);
    expect(other?.matchers[0]).not.toBe(first.templates[0]?.matchers[0]);
    expect(second.templates.flatMap((t) => t.matchers.map((m) => m.template))).toEqual([
      "t://{x}",
      "t://{x}",
    ]);
  });

  it("answers for a server with as many hostile templates as the caps let through", async () => {
    const { templatesPerServer, templateLength } = RESOURCE_ROUTING_LIMITS;
    // All different, the longest as long as a template may be.
    const templates = Array.from({ length: templatesPerServer }, (_, i) => ({
      uriTemplate: `x://${(i % 2 ? "{+a}" : "{+b}").repeat(Math.floor((templateLength - 5) / 4) - (i >> 1))}z`,
      server: "hostile",
    }));
    const directory = resourceDirectory({ resources: [], templates });
    expect(directory.dropped).toEqual([]);
    expect(directory.templates[0]?.matchers).toHaveLength(RESOURCE_ROUTING_LIMITS.templatesPerServer);
    const known = { resources: [], templates };
    const uri = `x://${"a/".repeat(RESOURCE_ROUTING_LIMITS.uriLength / 2 - 2)}`;
    expect(uri.length).toBe(RESOURCE_ROUTING_LIMITS.uriLength);
    expect(await route(uri, known)).toMatchObject({ kind: "refused", reason: "unknown" });
    expect(await route(`${uri.slice(0, -1)}z`, known)).toEqual({
      kind: "server",
      server: "hostile",
      by: "template",
    });
  });
});

describe("routable templates", () => {
  it("keeps each server's first templates up to the cap and drops the rest, saying so by server", () => {
    const limits = { ...RESOURCE_ROUTING_LIMITS, templatesPerServer: 2 };
    const templates = [
      ...["a://1", "a://2", "a://3", "a://4"].map((uriTemplate) => ({ uriTemplate, server: "many" })),
      { uriTemplate: "b://1", server: "few" },
    ];
    const { kept, dropped } = routableTemplates(templates, limits);
    expect(kept.map((t) => t.uriTemplate)).toEqual(["a://1", "a://2", "b://1"]);
    expect(dropped).toEqual([
      {
        server: "many",
        reason: "too_many",
        count: 2,
        message:
          "MCP server 'many' listed more than 2 resource templates; toolbus keeps the first 2 and leaves out 2 (reads of their URIs are refused)",
      },
    ]);
  });

  it("drops a template longer than the cap, saying so by server, and does not count it", () => {
    const limits = { ...RESOURCE_ROUTING_LIMITS, templatesPerServer: 1, templateLength: 10 };
    const { kept, dropped } = routableTemplates(
      [
        { uriTemplate: "long://{+a}{+a}", server: "s" },
        { uriTemplate: "ok://{a}", server: "s" },
      ],
      limits,
    );
    expect(kept.map((t) => t.uriTemplate)).toEqual(["ok://{a}"]);
    expect(dropped).toEqual([
      {
        server: "s",
        reason: "too_long",
        count: 1,
        message:
          "MCP server 's' listed 1 resource template(s) longer than 10 characters; toolbus leaves them out (reads of their URIs are refused)",
      },
    ]);
  });

  it("routes by the kept templates only", async () => {
    const limits = { ...RESOURCE_ROUTING_LIMITS, templatesPerServer: 1 };
    const known = {
      resources: [],
      templates: [
        { uriTemplate: "a://{x}", server: "s" },
        { uriTemplate: "b://{x}", server: "s" },
      ],
    };
    expect(await route("a://1", known, limits)).toMatchObject({ kind: "server", server: "s" });
    expect(await route("b://1", known, limits)).toMatchObject({ kind: "refused", reason: "unknown" });
  });
});

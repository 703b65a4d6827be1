/**
 * The gateway's REST routes and its OpenAPI document, over real HTTP with fetch: the real
 * catalog and dispatcher (child processes) and a scripted upstream server behind them.
 */
import { randomUUID } from "node:crypto";
import { connectBus, createLogger } from "@toolbus/bus";
import { internalSubjects, RESOURCE_TOOL_NAMES } from "@toolbus/protocol";
import { type StdioTestServer, startTestServer } from "@toolbus/testkit/mcp-test-server";
import Fastify, { type FastifyPluginAsync } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restApi } from "../src/adapters/http/rest-api.js";
import { callsClient } from "../src/adapters/nats/calls-client.js";
import { dispatchClient } from "../src/adapters/nats/toolbus-clients.js";
import type { GatewayService } from "../src/gateway-service.js";
import { rawRequest } from "./support/http.js";
import { eventually, mcpClient, natsUrl, Stack, tomlFor } from "./support/stack.js";

let stack: Stack;
let alpha: StdioTestServer;
let gateway: GatewayService;

beforeAll(async () => {
  alpha = await startTestServer({
    transport: "stdio",
    script: {
      tools: [
        { name: "echo", description: "Echoes its arguments." },
        { name: "get-thing", description: "Gets the thing.", behavior: { kind: "text", text: "thing" } },
        { name: "boom", description: "Always fails.", behavior: { kind: "error_result", text: "it broke" } },
        // Far longer than the stopping test's grace, so a loaded machine cannot let it finish in time.
        { name: "slow", description: "Takes its time.", behavior: { kind: "delay", ms: 15_000 } },
      ],
    },
  });
  stack = await Stack.start(
    "gw_rest",
    tomlFor([
      { name: "alpha", command: alpha.command, args: alpha.args },
      { name: "broken", command: "/bin/false", args: [] },
    ]),
  );
  stack.defer(() => alpha.dispose());
  gateway = await stack.gateway();
  // The broken server settles as failed shortly after start.
  await eventually("the broken server to fail", async () => {
    const body = (await (await fetch(`${gateway.url}/v1/servers`)).json()) as {
      servers: Array<{ name: string; status: string }>;
    };
    return body.servers.find((server) => server.name === "broken")?.status === "failed" ? true : undefined;
  });
}, 90_000);

afterAll(async () => {
  await stack?.close();
});

async function getJson(path: string, init?: RequestInit): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${gateway.url}${path}`, init);
  return { status: response.status, body: await response.json() };
}

function post(path: string, body: unknown, url = gateway.url): Promise<Response> {
  return fetch(`${url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

describe("GET /v1/servers", () => {
  it("lists every configured server with its status, and the error of one that failed", async () => {
    const { status, body } = await getJson("/v1/servers");
    expect({ status, body }).toEqual({
      status: 200,
      body: {
        revision: expect.any(Number),
        servers: [
          {
            name: "alpha",
            status: "ready",
            required: false,
            revision: expect.any(Number),
            // What the server said about itself at initialize (the test server's defaults).
            serverInfo: { name: "toolbus-mcp-test-server", version: "0.1.0" },
          },
          {
            name: "broken",
            status: "failed",
            error: expect.stringContaining("broken"),
            required: false,
            revision: expect.any(Number),
          },
        ],
      },
    });
  });
});

describe("GET /v1/catalog", () => {
  it("answers the catalog's model view with every tool of the ready servers, each by the name MCP clients see", async () => {
    const { status, body } = await getJson("/v1/catalog");
    const snapshot = body as {
      tools: Array<{ flatName: string; exposedName: string; server: string; description: string }>;
    };
    expect({
      status,
      tools: snapshot.tools.map(({ flatName, exposedName, server, description }) => ({
        flatName,
        exposedName,
        server,
        description,
      })),
    }).toEqual({
      status: 200,
      tools: [
        {
          flatName: "mcp__alpha__boom",
          exposedName: "alpha__boom",
          server: "alpha",
          description: "Always fails.",
        },
        {
          flatName: "mcp__alpha__echo",
          exposedName: "alpha__echo",
          server: "alpha",
          description: "Echoes its arguments.",
        },
        {
          flatName: "mcp__alpha__get_thing",
          exposedName: "alpha__get_thing",
          server: "alpha",
          description: "Gets the thing.",
        },
        {
          flatName: "mcp__alpha__slow",
          exposedName: "alpha__slow",
          server: "alpha",
          description: "Takes its time.",
        },
      ],
    });
    // The names /mcp's tools/list gives.
    const client = await mcpClient(gateway);
    try {
      const { tools } = await client.listTools();
      // Every catalog tool's (the resource tools are the gateway's own).
      const upstream = tools
        .map((tool) => tool.name)
        .filter((name) => !RESOURCE_TOOL_NAMES.includes(name as never));
      expect(snapshot.tools.map((tool) => tool.exposedName).sort()).toEqual(upstream.sort());
    } finally {
      await client.close();
    }
  });

  it("answers the same snapshot for exposure=all as the catalog does on the bus, exposed names added", async () => {
    const [http, onBus] = await Promise.all([
      getJson("/v1/catalog?exposure=all"),
      stack.nc.request(stack.subjects.catalogGet, JSON.stringify({ exposure: "all" })),
    ]);
    const { tools, ...rest } = http.body as { tools: Array<Record<string, unknown>> };
    expect({
      status: http.status,
      body: { ...rest, tools: tools.map(({ exposedName: _, ...tool }) => tool) },
    }).toEqual({
      status: 200,
      body: (onBus.json() as { result: unknown }).result,
    });
    expect(tools.every((tool) => typeof tool.exposedName === "string")).toBe(true);
  });

  it("searches the catalog with q, best match first, by flat and exposed name", async () => {
    const { status, body } = await getJson("/v1/catalog?q=thing");
    expect({
      status,
      names: (body as { tools: Array<{ flatName: string; exposedName: string }> }).tools.map((tool) => [
        tool.flatName,
        tool.exposedName,
      ]),
    }).toEqual({ status: 200, names: [["mcp__alpha__get_thing", "alpha__get_thing"]] });
  });

  it.each([
    [
      "an unknown exposure",
      "/v1/catalog?exposure=everything",
      /^exposure: Invalid option: expected one of "all"\|"model"$/,
    ],
    ["exposure=all with a search", "/v1/catalog?exposure=all&q=echo", /^exposure: a search \(q\) covers/],
    [
      "a limit without a search",
      "/v1/catalog?limit=5",
      /^limit, cursor: they page a search; give q as well$/,
    ],
    ["a limit out of range", "/v1/catalog?q=echo&limit=0", /^limit: Too small/],
  ])("refuses %s with 400 naming the parameter", async (_what, path, message) => {
    const { status, body } = await getJson(path);
    expect({ status, body }).toEqual({
      status: 400,
      body: { error: { code: "bad_request", message: expect.stringMatching(message), retryable: false } },
    });
  });
});

describe("POST /v1/calls", () => {
  it("calls a tool through the dispatcher and answers its reply", async () => {
    const callId = `rest-${randomUUID()}`;
    const response = await post("/v1/calls", { callId, tool: "mcp__alpha__get_thing", arguments: "{}" });
    expect({ status: response.status, body: await response.json() }).toEqual({
      status: 200,
      body: {
        callId,
        status: "completed",
        server: "alpha",
        tool: "get-thing",
        hookName: expect.any(String),
        output: { success: true, body: expect.stringContaining("thing") },
        result: { content: [{ type: "text", text: "thing" }] },
        durationMs: expect.any(Number),
        wallTimeMs: expect.any(Number),
        catalogRevision: expect.any(Number),
      },
    });
  });

  it("answers 200 with the failure when the server answered with an error result", async () => {
    const callId = `rest-${randomUUID()}`;
    const response = await post("/v1/calls", { callId, tool: "mcp__alpha__boom", arguments: "" });
    const reply = (await response.json()) as Record<string, unknown>;
    expect({
      status: response.status,
      callId: reply.callId,
      replyStatus: reply.status,
      result: reply.result,
    }).toEqual({
      status: 200,
      callId,
      replyStatus: "failed",
      result: { content: [{ type: "text", text: "it broke" }], isError: true },
    });
  });

  it.each([
    ["without a tool", { callId: "c1", arguments: "{}" }, /^tool: Invalid input: expected a flat tool name/],
    [
      "without a callId (it is required)",
      { tool: "mcp__alpha__echo", arguments: "{}" },
      /^callId: Invalid input/,
    ],
    [
      "with arguments as an object",
      { callId: "c2", tool: "mcp__alpha__echo", arguments: {} },
      /^arguments: /,
    ],
  ])("refuses a body %s with 400 naming the field", async (_what, body, message) => {
    const response = await post("/v1/calls", body);
    expect({ status: response.status, body: await response.json() }).toEqual({
      status: 400,
      body: {
        error: {
          code: "bad_request",
          message: expect.stringMatching(message),
          retryable: false,
        },
      },
    });
  });

  it("refuses a body that is not JSON with 400", async () => {
    const response = await post("/v1/calls", "{not json");
    expect({ status: response.status, body: await response.json() }).toEqual({
      status: 400,
      body: {
        error: {
          code: "bad_request",
          message: expect.stringMatching(/^the body is not valid JSON/),
          retryable: false,
        },
      },
    });
  });

  it("refuses a body over the gateway's limit with 413", async () => {
    const small = await stack.gateway({ limits: { bodyLimitBytes: 1024 } });
    const response = await post(
      "/v1/calls",
      { callId: "big", tool: "mcp__alpha__echo", arguments: JSON.stringify({ text: "x".repeat(4096) }) },
      small.url,
    );
    expect({ status: response.status, body: await response.json() }).toEqual({
      status: 413,
      body: {
        error: {
          code: "payload_too_large",
          message: "the request body is over the limit of 1 KiB for one request; send a smaller request",
          retryable: false,
        },
      },
    });
  });
});

describe("stopping", () => {
  it("answers a call still running after the grace period 503, and one that finished in time its reply", async () => {
    const logger = createLogger({ service: "gateway", version: "test", level: "silent" });
    const bus = await connectBus({
      natsUrl: natsUrl(),
      service: { name: "gateway", version: "test" },
      logger,
    });
    const app = Fastify({ logger: false });
    await app.register(
      restApi({
        bus,
        subjects: stack.subjects,
        dispatch: dispatchClient(
          bus,
          stack.subjects,
          60_000,
          await bus
            .kvm()
            .open(internalSubjects(stack.subjects.prefix).kv.calls, { allow_direct: true } as never),
        ),
        calls: callsClient(bus, stack.subjects),
        // Its calls name no thread.
        threads: { isSession: async () => false, claim: async () => "claimed" },
        logger,
        exposedNames: async () => undefined,
        bodyLimitBytes: 1024 * 1024,
        // Long enough for the quick call to finish within it however loaded the machine is.
        stopGraceMs: 3_000,
      }),
    );
    const url = await app.listen({ port: 0, host: "127.0.0.1" });
    try {
      const slowId = `rest-${randomUUID()}`;
      const quickId = `rest-${randomUUID()}`;
      const slow = post("/v1/calls", { callId: slowId, tool: "mcp__alpha__slow", arguments: "" }, url);
      const quick = post("/v1/calls", { callId: quickId, tool: "mcp__alpha__echo", arguments: "{}" }, url);
      // Both calls are in flight (past the gateway, at the server) before the stop, not after a guess.
      await eventually("both calls to reach the server", async () => {
        const ids = (await alpha.calls()).map((call) => call._meta?.callId);
        return ids.includes(slowId) && ids.includes(quickId) ? true : undefined;
      });
      await app.close();
      const [slowResponse, quickResponse] = await Promise.all([slow, quick]);
      expect({
        slow: { status: slowResponse.status, body: await slowResponse.json() },
        quick: {
          status: quickResponse.status,
          replyStatus: ((await quickResponse.json()) as { status: string }).status,
        },
      }).toEqual({
        slow: {
          status: 503,
          body: {
            error: {
              code: "server_unavailable",
              message:
                "the gateway stopped before the call finished; the call may still complete on its server, so check its events (or the dispatcher's history) before retrying",
              retryable: true,
            },
          },
        },
        quick: { status: 200, replyStatus: "completed" },
      });
    } finally {
      await app.close();
      await bus.close();
    }
  });
});

describe("bearer tokens", () => {
  it("answers the REST routes only with a configured token, and the console page without one", async () => {
    const guarded = await stack.gateway({ tokens: ["rest-token"] });
    const without = await fetch(`${guarded.url}/v1/servers`);
    const wrong = await fetch(`${guarded.url}/v1/servers`, { headers: { authorization: "Bearer nope" } });
    const right = await fetch(`${guarded.url}/v1/servers`, {
      headers: { authorization: "Bearer rest-token" },
    });
    const events = await fetch(`${guarded.url}/v1/events`);
    const page = await fetch(`${guarded.url}/`);
    expect({
      statuses: [without.status, wrong.status, right.status, events.status],
      challenge: without.headers.get("www-authenticate"),
      page: {
        status: page.status,
        type: page.headers.get("content-type"),
        title: /<title>toolbus<\/title>/.test(await page.text()),
      },
    }).toEqual({
      statuses: [401, 401, 200, 401],
      challenge: 'Bearer realm="toolbus"',
      page: { status: 200, type: "text/html; charset=utf-8", title: true },
    });
  });

  it("still refuses the console page to a Host that is not allowed", async () => {
    const response = await rawRequest(gateway.url, {
      method: "GET",
      path: "/",
      headers: { host: "evil.example.com" },
    });
    expect(response.status).toBe(403);
  });
});

describe("GET /openapi.json", () => {
  type Document = {
    openapi: string;
    paths: Record<string, Record<string, unknown>>;
    components: { schemas: Record<string, { required?: string[]; properties?: Record<string, unknown> }> };
  };

  async function document(url = gateway.url): Promise<Document> {
    const response = await fetch(`${url}/openapi.json`);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    return JSON.parse(await response.text()) as Document;
  }

  function operations(doc: Document): string[] {
    return Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
  }

  it("is an OpenAPI 3.1 document listing every route of the gateway", async () => {
    const doc = await document();
    expect({ openapi: doc.openapi, operations: operations(doc).sort() }).toEqual({
      openapi: "3.1.0",
      operations: [
        "DELETE /v1/calls/{callId}",
        "GET /",
        "GET /healthz",
        "GET /openapi.json",
        "GET /readyz",
        "GET /v1/catalog",
        "GET /v1/events",
        "GET /v1/servers",
        "POST /mcp",
        "POST /v1/calls",
      ],
    });
  });

  it("documents the traceparent header POST /v1/calls continues", async () => {
    const post = (await document()).paths["/v1/calls"]?.post as {
      parameters?: Array<{ name: string; in: string }>;
    };
    expect(post.parameters?.map(({ name, in: where }) => `${where} ${name}`)).toEqual(["header traceparent"]);
  });

  it("generates ToolCallRequest from the protocol schema, callId required", async () => {
    const schema = (await document()).components.schemas.ToolCallRequest;
    expect({ required: schema?.required, fields: Object.keys(schema?.properties ?? {}) }).toEqual({
      required: ["callId", "tool", "arguments"],
      fields: [
        "callId",
        "threadId",
        "turnId",
        "tool",
        "arguments",
        "catalogRevision",
        "toolFingerprint",
        "strictAutoReview",
        "model",
        "holdMs",
        // No requestedBy or requesterName: the edge names who asked, whatever a body says; no
        // clientCapabilities: a REST caller answers no server's question.
      ],
    });
  });

  it("has no reference that does not resolve inside the document", async () => {
    const doc = await document();
    const refs = new Set<string>();
    const walk = (value: unknown): void => {
      if (Array.isArray(value)) value.forEach(walk);
      else if (value && typeof value === "object") {
        for (const [key, inner] of Object.entries(value)) {
          if (key === "$ref" && typeof inner === "string") refs.add(inner);
          else walk(inner);
        }
      }
    };
    walk(doc);
    const unresolved = [...refs].filter((ref) => {
      let node: unknown = doc;
      for (const part of ref.replace(/^#\//, "").split("/")) {
        node = node && typeof node === "object" ? (node as Record<string, unknown>)[part] : undefined;
      }
      return !ref.startsWith("#/") || node === undefined;
    });
    expect({ unresolved, someRefs: refs.size > 10 }).toEqual({ unresolved: [], someRefs: true });
  });

  it("lists the approvals routes and the bearer scheme when the gateway has them", async () => {
    const approvalsRoutes: FastifyPluginAsync = async (app) => {
      app.get("/v1/approvals", async () => ({ pending: [] }));
    };
    const guarded = await stack.gateway({ tokens: ["doc-token"], plugins: [approvalsRoutes] });
    const response = await fetch(`${guarded.url}/openapi.json`, {
      headers: { authorization: "Bearer doc-token" },
    });
    const doc = (await response.json()) as Document & {
      security?: unknown;
      components: { securitySchemes?: unknown };
    };
    expect({
      approvals: operations(doc)
        .filter((operation) => operation.includes("approvals"))
        .sort(),
      security: doc.security,
      schemes: doc.components.securitySchemes,
    }).toEqual({
      approvals: [
        "GET /approvals",
        "GET /v1/approvals",
        "GET /v1/approvals/events",
        "POST /v1/approvals/{requestId}",
      ],
      security: [{ bearer: [] }],
      schemes: { bearer: { type: "http", scheme: "bearer" } },
    });
  });
});

/**
 * The edge's defences and its session lifecycle, with raw HTTP where an SDK client would never
 * misbehave: forged hosts, missing tokens, huge and malformed bodies, unknown sessions, many
 * idle sessions, and a session served by a replica that did not start it.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayService } from "../src/gateway-service.js";
import { initializeBody, rawRequest } from "./support/http.js";
import { eventually, mcpClient, Stack } from "./support/stack.js";

let stack: Stack;
let open: GatewayService;
let guarded: GatewayService;

beforeAll(async () => {
  // A catalog with no servers: the edge needs a catalog to be ready, not tools.
  stack = await Stack.start("gw_edge", "", ["catalog"]);
  open = await stack.gateway();
  guarded = await stack.gateway({ tokens: ["s3cret-token", "other-token"] });
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

function hostOf(gateway: GatewayService): string {
  return new URL(gateway.url).host;
}

describe("DNS-rebinding protection", () => {
  it("refuses a Host header that names another host with 403 and a JSON-RPC error", async () => {
    const response = await rawRequest(open.url, {
      headers: { host: "evil.example.com" },
      body: initializeBody(),
    });
    expect({ status: response.status, body: response.json }).toEqual({
      status: 403,
      body: {
        jsonrpc: "2.0",
        id: null,
        error: {
          code: -32000,
          message:
            'Forbidden: Host header "evil.example.com" is not an allowed host (localhost, 127.0.0.1, [::1]); add it to [gateway] allowed_hosts if this gateway should answer to it',
        },
      },
    });
  });

  it("refuses an Origin from another host even when the Host header is allowed", async () => {
    const response = await rawRequest(open.url, {
      headers: { host: hostOf(open), origin: "http://evil.example.com" },
      body: initializeBody(),
    });
    expect(response.status).toBe(403);
    expect(response.json).toMatchObject({ error: { code: -32000 } });
  });

  it("serves a request whose Host and Origin are an allowed host on any port", async () => {
    const response = await rawRequest(open.url, {
      headers: { host: `localhost:${new URL(open.url).port}`, origin: "http://localhost:5173" },
      body: initializeBody(),
    });
    expect(response.status).toBe(200);
    expect(response.json).toMatchObject({
      jsonrpc: "2.0",
      id: 1,
      result: { serverInfo: { name: "toolbus" } },
    });
  });
});

describe("bearer tokens", () => {
  it("answers 401 with a JSON-RPC error and a Bearer challenge when the token is missing", async () => {
    const response = await rawRequest(guarded.url, { body: initializeBody() });
    expect({
      status: response.status,
      challenge: response.headers["www-authenticate"],
      body: response.json,
    }).toEqual({
      status: 401,
      challenge: 'Bearer realm="toolbus"',
      body: {
        jsonrpc: "2.0",
        id: null,
        error: {
          code: -32000,
          message:
            "Unauthorized: send the header Authorization: Bearer <token> with a token from [gateway] tokens_env",
        },
      },
    });
  });

  it("answers 401 for a wrong token", async () => {
    const response = await rawRequest(guarded.url, {
      headers: { authorization: "Bearer not-the-token" },
      body: initializeBody(),
    });
    expect(response.status).toBe(401);
  });

  it("serves an MCP client that sends one of the configured tokens", async () => {
    const client = await mcpClient(guarded, { headers: { authorization: "Bearer other-token" } });
    try {
      // No servers here: only the resource tools, which the gateway offers by default.
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual([
        "list_mcp_resources",
        "list_mcp_resource_templates",
        "read_mcp_resource",
      ]);
    } finally {
      await client.close();
    }
  });

  it("keeps /healthz open and guards /readyz", async () => {
    const health = await rawRequest(guarded.url, { method: "GET", path: "/healthz" });
    const ready = await rawRequest(guarded.url, { method: "GET", path: "/readyz" });
    const readyWithToken = await rawRequest(guarded.url, {
      method: "GET",
      path: "/readyz",
      headers: { authorization: "Bearer s3cret-token" },
    });
    expect([health.status, health.json, ready.status, readyWithToken.status, readyWithToken.json]).toEqual([
      200,
      { status: "ok" },
      401,
      200,
      { status: "ready", bus: true, catalog: true },
    ]);
  });
});

describe("routes added by plugins", () => {
  it("serves them on the gateway's port behind the same host check and tokens", async () => {
    const gateway = await stack.gateway({
      tokens: ["s3cret-token"],
      plugins: [
        async (app) => {
          app.get("/v1/hello", async () => ({ hello: "world" }));
        },
      ],
    });
    const get = (headers: Record<string, string>) =>
      rawRequest(gateway.url, { method: "GET", path: "/v1/hello", headers });
    const [served, noToken, badHost] = await Promise.all([
      get({ authorization: "Bearer s3cret-token" }),
      get({}),
      get({ authorization: "Bearer s3cret-token", host: "evil.example.com" }),
    ]);
    expect([served.status, served.json, noToken.status, badHost.status]).toEqual([
      200,
      { hello: "world" },
      401,
      403,
    ]);
  });
});

describe("bad input", () => {
  it("answers a 50 MB body with 413 and keeps serving", async () => {
    const huge = Buffer.alloc(50 * 1024 * 1024, " ");
    huge.write('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"');
    huge.write('"}}', huge.length - 3);
    const response = await rawRequest(open.url, { body: huge });
    expect({ status: response.status, body: response.json }).toEqual({
      status: 413,
      body: {
        jsonrpc: "2.0",
        id: null,
        error: {
          code: -32000,
          message:
            "Payload Too Large: the request body is over the limit of 4 MiB for one request; send a smaller request",
        },
      },
    });
    expect((await rawRequest(open.url, { body: initializeBody() })).status).toBe(200);
  });

  it.each([
    ["text that is not JSON", "{not json", 400, -32700],
    ["JSON that is not a JSON-RPC message", '{"hello":"world"}', 400, -32600],
    ["an empty batch", "[]", 400, -32600],
  ])("answers %s with a JSON-RPC error", async (_what, body, status, code) => {
    const response = await rawRequest(open.url, { body });
    expect({
      status: response.status,
      code: (response.json as { error: { code: number } }).error.code,
    }).toEqual({
      status,
      code,
    });
  });

  it("answers a body that is not JSON by its content type with 415", async () => {
    const response = await rawRequest(open.url, { headers: { "content-type": "text/plain" }, body: "ping" });
    expect(response.status).toBe(415);
    expect(response.json).toMatchObject({ error: { code: -32000 } });
  });

  it("asks for a session id on a request that is not initialize", async () => {
    const response = await rawRequest(open.url, {
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" }),
    });
    expect({ status: response.status, body: response.json }).toEqual({
      status: 400,
      body: {
        jsonrpc: "2.0",
        id: null,
        error: {
          code: -32000,
          message:
            "Bad Request: Mcp-Session-Id header is required; start a session with an initialize request first",
        },
      },
    });
  });

  it("answers an unknown session id with 404, so the client starts a new session", async () => {
    const response = await rawRequest(open.url, {
      headers: { "mcp-session-id": "00000000-0000-4000-8000-000000000000" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" }),
    });
    expect(response.status).toBe(404);
    expect(response.json).toMatchObject({ error: { code: -32001 } });
  });
});

describe("readiness", () => {
  it("reports not ready while no catalog answers on its prefix", async () => {
    const lonely = await Stack.start("gw_lonely", "", []);
    try {
      const gateway = await lonelyGateway(lonely);
      const response = await rawRequest(gateway.url, { method: "GET", path: "/readyz" });
      expect({ status: response.status, body: response.json }).toEqual({
        status: 503,
        body: { status: "not_ready", bus: true, catalog: false },
      });
    } finally {
      await lonely.close();
    }
  });
});

async function lonelyGateway(lonely: Stack): Promise<GatewayService> {
  // stack.gateway() waits for readiness, which never comes here.
  const started = lonely.gateway();
  const gateway = await Promise.race([
    started,
    eventually("the gateway to listen", () => lonely.gateways[0]),
  ]);
  started.catch(() => undefined);
  return gateway;
}

describe("sessions", () => {
  it("holds 1,000 idle sessions in bounded memory and lets them expire", async () => {
    // Long enough to open them all on a busy machine; the test then waits for the TTL.
    const gateway = await stack.gateway({ limits: { sessionIdleTtlMs: 30_000 } });
    const gc = collector();
    gc();
    const before = process.memoryUsage().heapUsed;
    const ids = new Set<string>();
    for (let batch = 0; batch < 50; batch++) {
      const responses = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          rawRequest(gateway.url, { body: initializeBody(batch * 20 + i) }),
        ),
      );
      for (const response of responses) ids.add(String(response.headers["mcp-session-id"]));
    }
    gc();
    const held = process.memoryUsage().heapUsed;
    expect({ sessions: ids.size, held: gateway.sessions() }).toEqual({ sessions: 1_000, held: 1_000 });
    // Loose bound: a session is a few kilobytes, far from 200 KB.
    expect((held - before) / 1_000).toBeLessThan(200 * 1024);
    await eventually(
      "every idle session to expire",
      () => (gateway.sessions() === 0 ? true : undefined),
      60_000,
    );
    gc();
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(50 * 1024 * 1024);
    const expired = await rawRequest(gateway.url, {
      headers: { "mcp-session-id": [...ids][0]! },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" }),
    });
    expect(expired.status).toBe(404);
  }, 150_000);

  it("lets another replica serve a session, and a DELETE there ends it everywhere", async () => {
    const first = open;
    const second = await stack.gateway();
    const client = await mcpClient(first);
    const sessionId = (client.transport as { sessionId?: string }).sessionId!;
    const ping = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list" });
    const elsewhere = await rawRequest(second.url, {
      headers: { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" },
      body: ping,
    });
    const answer = elsewhere.json as { id: number; result: { tools: Array<{ name: string }> } };
    expect({
      status: elsewhere.status,
      id: answer.id,
      tools: answer.result.tools.map((tool) => tool.name),
    }).toEqual({
      status: 200,
      id: 7,
      tools: ["list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"],
    });
    const ended = await rawRequest(second.url, {
      method: "DELETE",
      headers: { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" },
    });
    expect(ended.status).toBe(200);
    const afterwards = await eventually("the first replica to drop the session", async () => {
      const response = await rawRequest(first.url, {
        headers: { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" },
        body: ping,
      });
      return response.status === 404 ? response : undefined;
    });
    expect(afterwards.json).toMatchObject({ error: { code: -32001 } });
    await client.close().catch(() => undefined);
  });
});

/** `gc()` without --expose-gc: the flag can be set at run time and the function fetched from a fresh context. */
function collector(): () => void {
  setFlagsFromString("--expose_gc");
  const gc = runInNewContext("gc") as () => void;
  return () => {
    gc();
    gc();
  };
}

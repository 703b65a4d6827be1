/**
 * The edge bounded under abuse, each limit reached over real HTTP (a real NATS and catalog
 * behind): JSON-RPC messages per POST, MCP sessions per client, open event streams per client
 * and in all (REST `/v1/events` and MCP GET streams count alike). Each refusal says which limit
 * and what to do.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayService } from "../src/gateway-service.js";
import { initializeBody, MCP_ACCEPT, rawRequest } from "./support/http.js";
import { Stack } from "./support/stack.js";

let stack: Stack;
let gateway: GatewayService;
const open: AbortController[] = [];

const PRINCIPALS = [
  { name: "bob", role: "caller" as const, token: "bob-token" },
  { name: "carol", role: "caller" as const, token: "carol-token" },
  { name: "dave", role: "caller" as const, token: "dave-token" },
];
const auth = (token: string) => ({ authorization: `Bearer ${token}` });

beforeAll(async () => {
  stack = await Stack.start("gw_limits", "", ["catalog"]);
  gateway = await stack.gateway({
    principals: PRINCIPALS,
    maxBatchSize: 2,
    maxSessionsPerClient: 2,
    maxStreams: 3,
    maxStreamsPerClient: 2,
  });
}, 60_000);

afterAll(async () => {
  for (const controller of open) controller.abort();
  await stack?.close();
});

async function initialize(token: string): Promise<{ status: number; sessionId?: string; body: unknown }> {
  const response = await rawRequest(gateway.url, { headers: auth(token), body: initializeBody() });
  const sessionId = response.headers["mcp-session-id"];
  return {
    status: response.status,
    ...(typeof sessionId === "string" ? { sessionId } : {}),
    body: response.json,
  };
}

/** Opens an event stream and keeps it open; answers its status (and the refusal's body). */
async function stream(
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; body?: unknown }> {
  const controller = new AbortController();
  open.push(controller);
  const response = await fetch(`${gateway.url}${path}`, {
    headers: { accept: "text/event-stream", ...headers },
    signal: controller.signal,
  });
  if (response.status === 200) return { status: 200 };
  return { status: response.status, body: await response.json() };
}

const mcpGet = (token: string, sessionId: string) =>
  stream("/mcp", {
    ...auth(token),
    accept: MCP_ACCEPT,
    "mcp-session-id": sessionId,
    "mcp-protocol-version": "2025-11-25",
  });

describe("limits at the edge", () => {
  it("refuses a JSON-RPC batch over max_batch_size with 400, naming the limit", async () => {
    const { sessionId } = await initialize("dave-token");
    const ping = (id: number) => ({ jsonrpc: "2.0", id, method: "ping" });
    const response = await rawRequest(gateway.url, {
      headers: { ...auth("dave-token"), "mcp-session-id": sessionId!, "mcp-protocol-version": "2025-03-26" },
      body: JSON.stringify([ping(1), ping(2), ping(3)]),
    });
    expect([response.status, response.json]).toEqual([
      400,
      {
        jsonrpc: "2.0",
        id: null,
        error: {
          code: -32600,
          message:
            "Invalid Request: the batch has 3 messages, over the gateway's limit of 2 ([gateway] max_batch_size); send them in smaller batches",
        },
      },
    ]);
  });

  it("caps a client's sessions: its least recently used idle one makes room, and when all are busy it gets 429", async () => {
    // Three in a row: the first, idle by then, makes room for the third.
    const started = [
      await initialize("bob-token"),
      await initialize("bob-token"),
      await initialize("bob-token"),
    ];
    const [, second, third] = started;
    // Both held sessions busy (their GET streams open): no room left for bob, still room for carol.
    const streams = [
      await mcpGet("bob-token", second!.sessionId!),
      await mcpGet("bob-token", third!.sessionId!),
    ];
    expect({ started: started.map((session) => session.status), streams }).toEqual({
      started: [200, 200, 200],
      streams: [{ status: 200 }, { status: 200 }],
    });
    const refused = await initialize("bob-token");
    const carol = await initialize("carol-token");
    expect([refused.status, refused.body, carol.status]).toEqual([
      429,
      {
        jsonrpc: "2.0",
        id: null,
        error: {
          code: -32000,
          message:
            "Too Many Requests: bob holds 2 MCP sessions, the most one client may ([gateway] max_sessions_per_client), and all are in use; end unused sessions with DELETE /mcp, or retry later",
        },
      },
      200,
    ]);
  });

  it("caps open event streams per client and in all, counting /v1/events and MCP GET streams alike", async () => {
    // bob holds 2 streams already (the MCP GET streams of the test before): the per-client limit.
    const bobEvents = await stream("/v1/events", auth("bob-token"));
    // carol takes the last of the 3 slots; then dave finds none.
    const carolEvents = await stream("/v1/events", auth("carol-token"));
    const { sessionId } = await initialize("dave-token");
    const daveGet = await mcpGet("dave-token", sessionId!);
    const daveEvents = await stream("/v1/events", auth("dave-token"));
    expect({ bobEvents, carolEvents, daveGet, daveEvents }).toEqual({
      bobEvents: {
        status: 429,
        body: {
          error: {
            code: "server_unavailable",
            message:
              "Too Many Requests: bob already has the most open event streams one client may hold (2, [gateway] max_streams_per_client); close one first",
            retryable: true,
          },
        },
      },
      carolEvents: { status: 200 },
      daveGet: {
        status: 503,
        body: {
          jsonrpc: "2.0",
          id: null,
          error: {
            code: -32000,
            message:
              "Service Unavailable: this server holds its maximum of 3 open event streams ([gateway] max_streams); retry later",
          },
        },
      },
      daveEvents: {
        status: 503,
        body: {
          error: {
            code: "server_unavailable",
            message:
              "Service Unavailable: this server holds its maximum of 3 open event streams ([gateway] max_streams); retry later",
            retryable: true,
          },
        },
      },
    });
    // A stream that ends gives its slot back.
    for (const controller of open.splice(0)) controller.abort();
    await expect
      .poll(async () => (await stream("/v1/events", auth("dave-token"))).status, { timeout: 5_000 })
      .toBe(200);
  });
});

describe("2026-07-28 clients", () => {
  it("count each open subscriptions/listen stream against the same limits", async () => {
    const limited = await stack.gateway({ principals: PRINCIPALS, maxStreams: 10, maxStreamsPerClient: 1 });
    const listen = async (): Promise<{ status: number; body?: unknown }> => {
      const controller = new AbortController();
      open.push(controller);
      const response = await fetch(`${limited.url}/mcp`, {
        method: "POST",
        headers: {
          ...auth("carol-token"),
          accept: MCP_ACCEPT,
          "content-type": "application/json",
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "subscriptions/listen",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "subscriptions/listen",
          params: {
            notifications: { toolsListChanged: true },
            _meta: {
              "io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientInfo": { name: "limits", version: "1" },
              "io.modelcontextprotocol/clientCapabilities": {},
            },
          },
        }),
        signal: controller.signal,
      });
      if (response.status === 200) return { status: 200 };
      return { status: response.status, body: await response.json() };
    };
    const first = await listen();
    const second = await listen();
    expect({ first, second }).toEqual({
      first: { status: 200 },
      second: {
        status: 429,
        body: {
          jsonrpc: "2.0",
          id: null,
          error: {
            code: -32000,
            message:
              "Too Many Requests: carol already has the most open event streams one client may hold (1, [gateway] max_streams_per_client); close one first",
          },
        },
      },
    });
  });
});

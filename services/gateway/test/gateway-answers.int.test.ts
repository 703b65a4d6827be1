/**
 * How a tools/call answer reaches the client over raw HTTP: a call that sends nothing on the
 * way is answered with one JSON body; one that reports progress, asks the client something or
 * outlasts SSE_COMMIT_MS is answered with an SSE stream, its answer last. A batch likewise: one
 * JSON array, or a stream that ends when every call in it is answered. And the rest of the
 * session's streamable HTTP: its one GET stream, notifications taken with 202, DELETE.
 */
import { type StdioTestServer, startTestServer } from "@toolbus/testkit/mcp-test-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SSE_COMMIT_MS } from "../src/adapters/http/answer-stream.js";
import type { GatewayService } from "../src/gateway-service.js";
import { MCP_ACCEPT, sseMessages } from "./support/http.js";
import { eventually, Stack, tomlFor } from "./support/stack.js";

let stack: Stack;
let alpha: StdioTestServer;
let gateway: GatewayService;

beforeAll(async () => {
  alpha = await startTestServer({
    transport: "stdio",
    script: {
      tools: [
        { name: "echo" },
        { name: "count", behavior: { kind: "progress", count: 3, intervalMs: 10 } },
        { name: "slow", behavior: { kind: "delay", ms: SSE_COMMIT_MS + 500 } },
      ],
    },
  });
  stack = await Stack.start(
    "gw_answers",
    tomlFor([{ name: "alpha", command: alpha.command, args: alpha.args }]),
  );
  stack.defer(() => alpha.dispose());
  gateway = await stack.gateway();
}, 90_000);

afterAll(async () => {
  await stack?.close();
});

type Post = (body: unknown, headers?: Record<string, string>) => Promise<Response>;

/**
 * A raw session: initialize, then `notifications/initialized`; `post` sends in it, `get` opens
 * its GET stream, `end` DELETEs it.
 */
async function openSession(): Promise<
  Post & { sessionId: string; get(): Promise<Response>; end(): Promise<Response> }
> {
  const post = (body: unknown, sessionId?: string, headers: Record<string, string> = {}) =>
    fetch(`${gateway.url}/mcp`, {
      method: "POST",
      headers: {
        accept: MCP_ACCEPT,
        "content-type": "application/json",
        ...(sessionId ? { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" } : {}),
        ...headers,
      },
      body: JSON.stringify(body),
    });
  const init = await post({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "raw", version: "1.0.0" },
    },
  });
  const sessionId = init.headers.get("mcp-session-id");
  if (!sessionId) throw new Error(`initialize gave no session id: ${init.status} ${await init.text()}`);
  await init.text();
  await (await post({ jsonrpc: "2.0", method: "notifications/initialized" }, sessionId)).text();
  const inSession: Post = (body, headers) => post(body, sessionId, headers);
  return Object.assign(inSession, {
    sessionId,
    get: () =>
      fetch(`${gateway.url}/mcp`, {
        method: "GET",
        headers: {
          accept: "text/event-stream",
          "mcp-session-id": sessionId,
          "mcp-protocol-version": "2025-11-25",
        },
      }),
    end: () =>
      fetch(`${gateway.url}/mcp`, {
        method: "DELETE",
        headers: { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" },
      }),
  });
}

const echoCall = (id: number) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "alpha__echo", arguments: { word: "hi" } },
});

describe("tools/call answers", () => {
  it("answers a call that sends nothing on the way with one JSON body", async () => {
    const post = await openSession();
    const response = await post({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "alpha__echo", arguments: { word: "hi" } },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.json()).toEqual({
      jsonrpc: "2.0",
      id: 7,
      result: { content: [{ type: "text", text: '{"word":"hi"}' }] },
    });
  });

  it("streams a call that reports progress: the notifications first, then the answer", async () => {
    const post = await openSession();
    const response = await post({
      jsonrpc: "2.0",
      id: 8,
      method: "tools/call",
      params: { name: "alpha__count", arguments: {}, _meta: { progressToken: "p1" } },
    });
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const stream = sseMessages(response);
    const received: Array<Record<string, unknown>> = [];
    for (;;) {
      const message = await stream.next();
      received.push(message);
      if ("id" in message) break;
    }
    expect(received.map((message) => message.method ?? "answer")).toEqual([
      "notifications/progress",
      "notifications/progress",
      "notifications/progress",
      "answer",
    ]);
    expect(received.at(-1)).toMatchObject({ id: 8, result: { content: [{ type: "text" }] } });
  });

  it("gives each of two calls running at once only its own progress", async () => {
    const [first, second] = await Promise.all([openSession(), openSession()]);
    const streamed = async (post: (body: unknown) => Promise<Response>, token: string) => {
      const response = await post({
        jsonrpc: "2.0",
        id: 10,
        method: "tools/call",
        params: { name: "alpha__count", arguments: {}, _meta: { progressToken: token } },
      });
      const stream = sseMessages(response);
      const tokens: unknown[] = [];
      for (;;) {
        const message = await stream.next();
        if ("id" in message) return tokens;
        tokens.push((message.params as { progressToken?: unknown }).progressToken);
      }
    };
    expect(await Promise.all([streamed(first!, "first"), streamed(second!, "second")])).toEqual([
      ["first", "first", "first"],
      ["second", "second", "second"],
    ]);
  });

  it("answers a call that outlasts the JSON window with an SSE stream", async () => {
    const post = await openSession();
    const response = await post({
      jsonrpc: "2.0",
      id: 9,
      method: "tools/call",
      params: { name: "alpha__slow", arguments: { n: 1 } },
    });
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    expect(await sseMessages(response).next()).toEqual({
      jsonrpc: "2.0",
      id: 9,
      result: { content: [{ type: "text", text: '{"n":1}' }] },
    });
  });

  it("ends a running call's response when the client ends the session", async () => {
    const post = await openSession();
    const running = post({
      jsonrpc: "2.0",
      id: 11,
      method: "tools/call",
      params: { name: "alpha__slow", arguments: { n: 11 } },
    });
    await eventually("the slow call to reach the server", async () =>
      (await alpha.calls()).some((call) => call.tool === "slow" && call.arguments?.n === 11)
        ? true
        : undefined,
    );
    expect((await post.end()).status).toBe(200);
    const body = await (await running).text();
    expect(body).not.toContain('"result"');
  });
});

describe("requests the session does not take as they are", () => {
  it("refuses an unsupported MCP-Protocol-Version with 400 naming the supported ones", async () => {
    const post = await openSession();
    const response = await post(echoCall(12), { "mcp-protocol-version": "1999-01-01" });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: { message: expect.stringContaining("Unsupported protocol version: 1999-01-01") },
    });
  });

  it("refuses a client that does not accept an SSE answer with 406", async () => {
    const post = await openSession();
    const response = await post(echoCall(13), { accept: "application/json" });
    expect(response.status).toBe(406);
  });

  it("answers a batch of two calls in one response with both answers", async () => {
    const post = await openSession();
    const response = await post([echoCall(14), echoCall(15)]);
    expect(response.status).toBe(200);
    // Either form streamable HTTP allows: one JSON array, or a stream of the answers.
    const ids = (await allMessages(response)).map((message) => message.id);
    expect(ids.sort()).toEqual([14, 15]);
  });
});

const countCall = (id: number, progressToken: string) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "alpha__count", arguments: {}, _meta: { progressToken } },
});

/** Every JSON-RPC message of a response read to its end: a JSON body (or array), or SSE events. */
async function allMessages(response: Response): Promise<Array<Record<string, unknown>>> {
  const text = await response.text();
  if (response.headers.get("content-type") === "application/json") {
    const body = JSON.parse(text) as Record<string, unknown> | Array<Record<string, unknown>>;
    return Array.isArray(body) ? body : [body];
  }
  return text
    .split("\n\n")
    .map((event) =>
      event
        .split("\n")
        .filter((line) => line.startsWith("data: "))
        .map((line) => line.slice(6))
        .join("\n"),
    )
    .filter((data) => data.trim() !== "")
    .map((data) => JSON.parse(data) as Record<string, unknown>);
}

describe("batches", () => {
  it("answers a batch whose calls send nothing on the way with one JSON array, in the batch's order", async () => {
    const post = await openSession();
    const response = await post([echoCall(21), echoCall(20)]);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.json()).toEqual([
      { jsonrpc: "2.0", id: 21, result: { content: [{ type: "text", text: '{"word":"hi"}' }] } },
      { jsonrpc: "2.0", id: 20, result: { content: [{ type: "text", text: '{"word":"hi"}' }] } },
    ]);
  });

  it("streams a batch once a call in it reports progress, and ends the stream when every call is answered", async () => {
    const post = await openSession();
    const response = await post([countCall(22, "b1"), echoCall(23)]);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    // Read to the end: the stream ends by itself once both are answered.
    const messages = await allMessages(response);
    expect(messages.filter((message) => message.method === "notifications/progress")).toHaveLength(3);
    const answers = messages.filter((message) => "id" in message);
    expect(answers.map((answer) => answer.id).sort()).toEqual([22, 23]);
    expect(answers.every((answer) => "result" in answer)).toBe(true);
  });

  it("takes a POST of notifications only with 202 and no body", async () => {
    const post = await openSession();
    const response = await post([
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 999 } },
      { jsonrpc: "2.0", method: "notifications/roots/list_changed" },
    ]);
    expect({ status: response.status, body: await response.text() }).toEqual({ status: 202, body: "" });
  });
});

describe("the session's GET stream and DELETE", () => {
  it("opens one GET stream per session: a second while it is open gets 409, and one after it closed opens", async () => {
    const post = await openSession();
    const first = await post.get();
    expect({ status: first.status, type: first.headers.get("content-type") }).toEqual({
      status: 200,
      type: "text/event-stream",
    });
    const second = await post.get();
    expect(second.status).toBe(409);
    expect(await second.json()).toMatchObject({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32000, message: expect.stringContaining("Conflict: Only one SSE stream") },
    });
    await first.body?.cancel();
    const third = await eventually("a GET stream once the first closed", async () => {
      const response = await post.get();
      if (response.status === 200) return response;
      await response.text();
      return undefined;
    });
    expect(third.headers.get("content-type")).toBe("text/event-stream");
    await third.body?.cancel();
  });

  it("refuses a GET that does not accept text/event-stream with 406", async () => {
    const post = await openSession();
    const response = await fetch(`${gateway.url}/mcp`, {
      method: "GET",
      headers: { accept: "application/json", "mcp-session-id": post.sessionId },
    });
    expect(response.status).toBe(406);
  });

  it("ends the session on DELETE: its GET stream ends, and its id is unknown after", async () => {
    const post = await openSession();
    const stream = await post.get();
    expect(stream.status).toBe(200);
    const ended = stream.text();
    expect((await post.end()).status).toBe(200);
    // The stream's body ends (text() resolves) rather than staying open.
    await ended;
    const after = await post(echoCall(30));
    expect(after.status).toBe(404);
    expect(await after.json()).toMatchObject({ error: { code: -32001 } });
  });
});

/**
 * A 2026-07-28 server's questions during a call (`input_required`) through toolbus: a
 * 2026-07-28 client gets the round as the server asked it, under the server's own keys, with a
 * requestState of toolbus's (the server's own never leaves toolbus), and its answers reach the
 * server with the server's requestState; a 2025 client is asked each question as a request. The
 * server is told, with the call, what the caller can answer. Every service and server is real.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CreateMessageRequestSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { type HttpTestServer, startTestServer } from "@toolbus/testkit/mcp-test-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayService } from "../src/gateway-service.js";
import { MCP_ACCEPT } from "./support/http.js";
import { mcpClient, Stack } from "./support/stack.js";

const MODERN = "2026-07-28";
const NAME = {
  method: "elicitation/create",
  params: {
    message: "What is your name?",
    requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
  },
};
const HAIKU = {
  method: "sampling/createMessage",
  params: { messages: [{ role: "user", content: { type: "text", text: "A haiku?" } }], maxTokens: 50 },
};
const WHERE = { method: "roots/list" };
const ANSWERS = {
  name: { action: "accept", content: { name: "Ada" } },
  haiku: { role: "assistant", content: { type: "text", text: "old pond" }, model: "m" },
  where: { roots: [{ uri: "file:///work", name: "work" }] },
};

let stack: Stack;
let gateway: GatewayService;
let server: HttpTestServer;
const clients: Client[] = [];

beforeAll(async () => {
  server = await startTestServer({
    transport: "http",
    era: MODERN,
    script: {
      tools: [
        { name: "survey", behavior: { kind: "round", requests: { name: NAME, haiku: HAIKU, where: WHERE } } },
      ],
    },
  });
  stack = await Stack.start(
    "gw_input_rounds",
    `[mcp_servers.modern]\nurl = ${JSON.stringify(server.url)}\ndefault_tools_approval_mode = "approve"\n`,
  );
  stack.defer(() => server.dispose());
  gateway = await stack.gateway();
}, 120_000);

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  await stack?.close();
});

/** One 2026-07-28 `tools/call` by hand, declaring `capabilities`: its JSON-RPC answer. */
async function call(
  params: Record<string, unknown>,
  capabilities: Record<string, unknown> = { elicitation: {}, sampling: {}, roots: {} },
): Promise<{
  status: number;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}> {
  const response = await fetch(`${gateway.url}/mcp`, {
    method: "POST",
    headers: {
      accept: MCP_ACCEPT,
      "content-type": "application/json",
      "mcp-protocol-version": MODERN,
      "mcp-method": "tools/call",
      "mcp-name": "modern__survey",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: {
        name: "modern__survey",
        arguments: {},
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": MODERN,
          "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
          "io.modelcontextprotocol/clientCapabilities": capabilities,
        },
      },
    }),
  });
  const text = await response.text();
  const last = response.headers.get("content-type")?.includes("text/event-stream")
    ? (text
        .split("\n")
        .filter((line) => line.startsWith("data: "))
        .at(-1)
        ?.slice("data: ".length) ?? "{}")
    : text;
  return { status: response.status, ...JSON.parse(last) };
}

/** What the server answered once it had its answers: the requestState it got back, and the answers. */
function serverSaw(result: Record<string, unknown> | undefined): unknown {
  const [content] = (result?.content ?? []) as Array<{ text: string }>;
  return content ? JSON.parse(content.text) : result;
}

describe("a 2026-07-28 client", () => {
  it("gets the server's round under the server's keys, and the server gets the answers with its own requestState", async () => {
    const asked = await call({});
    const requestState = asked.result?.requestState;
    const answered = await call({ inputResponses: ANSWERS, requestState });
    expect({
      asked: { resultType: asked.result?.resultType, inputRequests: asked.result?.inputRequests },
      stateIsToolbus: typeof requestState === "string" && requestState !== "round-1",
      saw: serverSaw(answered.result),
    }).toEqual({
      asked: { resultType: "input_required", inputRequests: { name: NAME, haiku: HAIKU, where: WHERE } },
      stateIsToolbus: true,
      saw: { requestState: "round-1", responses: ANSWERS },
    });
  });

  it("is refused an answer that leaves a question out, a replay and a forged requestState; the question waits for a whole answer", async () => {
    const asked = await call({});
    const requestState = asked.result?.requestState;
    const partial = await call({ inputResponses: { name: ANSWERS.name }, requestState });
    const forged = await call({ inputResponses: ANSWERS, requestState: `${String(requestState)}x` });
    const whole = await call({ inputResponses: ANSWERS, requestState });
    const replayed = await call({ inputResponses: ANSWERS, requestState });
    expect({
      partial: partial.error,
      forged: forged.error?.code,
      whole: serverSaw(whole.result),
      replayed: replayed.error?.code,
    }).toEqual({
      partial: {
        code: -32602,
        message: expect.stringContaining(
          "inputResponses.haiku must answer inputRequests.haiku (sampling/createMessage",
        ),
      },
      forged: -32602,
      whole: { requestState: "round-1", responses: ANSWERS },
      replayed: -32602,
    });
  });

  it("tells the server, with the call, only what it declared it can answer", async () => {
    const before = (await server.calls()).length;
    await call({}, { sampling: {} });
    await call({}, { elicitation: { url: {} }, roots: { listChanged: true }, experimental: { x: {} } });
    const told = (await server.calls()).slice(before).map((line) => line.clientCapabilities);
    expect(told).toEqual([{ sampling: {} }, { elicitation: { url: {} }, roots: { listChanged: false } }]);
  });

  it("gets the server's refusal when it did not declare what the server needs (-32021, HTTP 400)", async () => {
    const refused = await call({}, { elicitation: {} });
    expect({ status: refused.status, code: refused.error?.code, data: refused.error?.data }).toEqual({
      status: 400,
      code: -32021,
      data: { requiredCapabilities: expect.objectContaining({ sampling: {} }) },
    });
  });
});

describe("a 2025 client", () => {
  it("reads the server's refusal when it did not declare what the server needs", async () => {
    const client = await mcpClient(gateway, { capabilities: { elicitation: { form: {} } } });
    clients.push(client);
    const result = await client.callTool({ name: "modern__survey", arguments: {} });
    expect({ isError: result.isError, text: (result.content as Array<{ text: string }>)[0]?.text }).toEqual({
      isError: true,
      text: expect.stringMatching(
        /^MCP server modern did not run the tool: the calling MCP client must declare .*sampling/,
      ),
    });
  });

  it("is asked each of the server's questions as a request; roots are not its to give", async () => {
    const client = await mcpClient(gateway, {
      capabilities: { elicitation: { form: {} }, sampling: {}, roots: {} },
    });
    clients.push(client);
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.method);
      return { action: "accept", content: { name: "Grace" } };
    });
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      asked.push(request.method);
      return { role: "assistant", content: { type: "text", text: "frog jumps" }, model: "m2" };
    });
    const result = await client.callTool({ name: "modern__survey", arguments: {} });
    expect({ asked, saw: serverSaw(result) }).toEqual({
      asked: ["elicitation/create", "sampling/createMessage"],
      saw: {
        requestState: "round-1",
        responses: {
          name: { action: "accept", content: { name: "Grace" } },
          haiku: { role: "assistant", content: { type: "text", text: "frog jumps" }, model: "m2" },
          where: { roots: [] },
        },
      },
    });
  });
});

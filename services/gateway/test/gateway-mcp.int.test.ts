/**
 * The gateway as an MCP client sees it: an SDK Client over streamable HTTP, with the real
 * catalog and dispatcher (child processes) and real upstream servers behind them.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  type Progress,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { Kvm } from "@nats-io/kv";
import { type CatalogServerEntry, catalogKey, RESOURCE_TOOL_NAMES } from "@toolbus/protocol";
import {
  type StdioTestServer,
  serverEverythingCommand,
  startTestServer,
} from "@toolbus/testkit/mcp-test-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayService } from "../src/gateway-service.js";
import { MCP_ACCEPT, sseMessages } from "./support/http.js";
import { eventually, mcpClient, Stack, tomlFor } from "./support/stack.js";

/** server-everything's tools for a client with roots, form and URL elicitation and sampling (what the catalog's connector declares). */
const EVERYTHING_TOOLS = [
  "echo",
  "get-annotated-message",
  "get-env",
  "get-resource-links",
  "get-resource-reference",
  "get-roots-list",
  "get-structured-content",
  "get-sum",
  "get-tiny-image",
  "gzip-file-as-resource",
  "simulate-research-query",
  "toggle-simulated-logging",
  "toggle-subscriber-updates",
  "trigger-elicitation-request",
  "trigger-long-running-operation",
  "trigger-sampling-request",
  // Offered because toolbus declares URL-mode elicitation upstream.
  "trigger-url-elicitation",
];

let stack: Stack;
let alpha: StdioTestServer;
let beta: StdioTestServer;
let prefixed: GatewayService;
let conditional: GatewayService;
const clients: Client[] = [];

async function client(
  gateway: GatewayService,
  options: Parameters<typeof mcpClient>[1] = {},
): Promise<Client> {
  const connected = await mcpClient(gateway, options);
  clients.push(connected);
  return connected;
}

beforeAll(async () => {
  alpha = await startTestServer({
    transport: "stdio",
    script: {
      tools: [
        { name: "echo" },
        { name: "get-thing", description: "Gets the thing.", behavior: { kind: "text", text: "thing" } },
        { name: "only_alpha" },
        { name: "count", behavior: { kind: "progress", count: 4, intervalMs: 20 } },
        {
          name: "ask",
          behavior: {
            kind: "elicit",
            message: "What is your name?",
            requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
          },
        },
        { name: "note", behavior: { kind: "log", level: "warning", data: "careful", text: "noted" } },
        {
          name: "visit",
          behavior: { kind: "elicit", message: "Sign in to Acme", url: "https://acme.example.com/connect" },
        },
        {
          name: "plan",
          behavior: {
            kind: "sample",
            prompt: "Plan a trip",
            tools: [{ name: "weather", inputSchema: { type: "object", properties: {} } }],
          },
        },
      ],
    },
  });
  beta = await startTestServer({ transport: "stdio", script: { tools: [{ name: "echo" }] } });
  const everything = serverEverythingCommand();
  stack = await Stack.start(
    "gw_mcp",
    tomlFor([
      { name: "alpha", command: alpha.command, args: alpha.args },
      { name: "beta", command: beta.command, args: beta.args },
      { name: "everything", command: everything.command, args: everything.args },
    ]),
  );
  stack.defer(() => alpha.dispose());
  stack.defer(() => beta.dispose());
  prefixed = await stack.gateway({ naming: "prefixed" });
  conditional = await stack.gateway({ naming: "conditional" });
}, 90_000);

afterAll(async () => {
  for (const connected of clients) await connected.close().catch(() => undefined);
  await stack?.close();
});

describe("tools/list", () => {
  it("names every tool <server>__<tool>, sanitized, by default", async () => {
    const { tools } = await (await client(prefixed)).listTools();
    expect(tools.map((tool) => tool.name)).toEqual([
      ...RESOURCE_TOOL_NAMES,
      "alpha__ask",
      "alpha__count",
      "alpha__echo",
      "alpha__get_thing",
      "alpha__note",
      "alpha__only_alpha",
      "alpha__plan",
      "alpha__visit",
      "beta__echo",
      ...EVERYTHING_TOOLS.map((name) => `everything__${name.replaceAll("-", "_")}`),
    ]);
  });

  it("keeps a raw name in conditional mode when it is valid and unique across the catalog", async () => {
    const { tools } = await (await client(conditional)).listTools();
    expect(tools.map((tool) => tool.name)).toEqual([
      ...RESOURCE_TOOL_NAMES,
      "ask",
      "count",
      "alpha__echo",
      "get-thing",
      "note",
      "only_alpha",
      "plan",
      "visit",
      "beta__echo",
      "everything__echo",
      ...EVERYTHING_TOOLS.slice(1),
    ]);
  });

  it("lists a tool with the description and input schema its server gave", async () => {
    const { tools } = await (await client(prefixed)).listTools();
    expect(tools.find((tool) => tool.name === "alpha__get_thing")).toEqual({
      name: "alpha__get_thing",
      description: "Gets the thing.",
      inputSchema: { type: "object", properties: {} },
    });
  });
});

describe("tools/call", () => {
  it("calls echo on server-everything and returns its text", async () => {
    const result = await (await client(prefixed)).callTool({
      name: "everything__echo",
      arguments: { message: "hello" },
    });
    expect(result).toEqual({ content: [{ type: "text", text: "Echo: hello" }] });
  });

  it("routes a raw name kept in conditional mode to its server", async () => {
    const result = await (await client(conditional)).callTool({ name: "get-thing", arguments: {} });
    expect(result).toEqual({ content: [{ type: "text", text: "thing" }] });
  });

  it("returns image content as the server sent it", async () => {
    const result = await (await client(prefixed)).callTool({
      name: "everything__get_tiny_image",
      arguments: {},
    });
    const content = result.content as Array<{ type: string; mimeType?: string; data?: string }>;
    expect(content.map((item) => ({ type: item.type, mimeType: item.mimeType }))).toEqual([
      { type: "text", mimeType: undefined },
      { type: "image", mimeType: "image/png" },
      { type: "text", mimeType: undefined },
    ]);
    expect(content[1]?.data).toMatch(/^iVBORw0KGgo/);
  });

  it("answers a tool name that does not exist with an invalid-params error", async () => {
    await expect(
      (await client(prefixed)).callTool({ name: "alpha__missing", arguments: {} }),
    ).rejects.toThrow("MCP error -32602: Unknown tool: alpha__missing. It is not in the toolbus catalog");
  });

  it("relays the server's progress notifications to a client that asked for progress", async () => {
    const connected = await client(prefixed);
    // Read off the transport, as they arrive: the SDK runs its progress callbacks a microtask
    // late and drops those that come in the same read as the result (on a loaded machine, any
    // number of them), which says nothing about what the gateway sent.
    const updates: Progress[] = [];
    const transport = connected.transport!;
    const deliver = transport.onmessage!;
    transport.onmessage = (message, extra) => {
      if ("method" in message && message.method === "notifications/progress") {
        const { progressToken: _token, ...progress } = message.params as Progress & {
          progressToken: unknown;
        };
        updates.push(progress);
      }
      deliver(message, extra);
    };
    const result = await connected.callTool({ name: "alpha__count", arguments: {} }, undefined, {
      onprogress: () => undefined,
    });
    expect({ result, updates }).toEqual({
      result: { content: [{ type: "text", text: "done" }] },
      updates: [1, 2, 3, 4].map((step) => ({ progress: step, total: 4, message: `step ${step} of 4` })),
    });
  });

  it("relays the server's log messages during a call", async () => {
    const connected = await client(prefixed);
    const messages: unknown[] = [];
    connected.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      messages.push(notification.params);
    });
    const result = await connected.callTool({ name: "alpha__note", arguments: {} });
    expect(result).toEqual({ content: [{ type: "text", text: "noted" }] });
    await eventually("the log message", () => (messages.length > 0 ? true : undefined));
    expect(messages).toEqual([{ level: "warning", logger: "mcp-test-server", data: "careful" }]);
  });

  it("drops log messages below the level the client set", async () => {
    const connected = await client(prefixed);
    const messages: unknown[] = [];
    connected.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      messages.push(notification.params);
    });
    await connected.setLoggingLevel("error");
    const result = await connected.callTool({ name: "alpha__note", arguments: {} });
    expect({ result, messages }).toEqual({
      result: { content: [{ type: "text", text: "noted" }] },
      messages: [],
    });
  });

  it("puts the server's elicitation to the client and returns the client's answer to the server", async () => {
    const connected = await client(prefixed, { capabilities: { elicitation: {} } });
    const asked: unknown[] = [];
    connected.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return { action: "accept", content: { name: "Ada" } };
    });
    const result = await connected.callTool({ name: "alpha__ask", arguments: {} });
    expect({ asked, result }).toEqual({
      asked: [
        {
          mode: "form",
          message: "What is your name?",
          requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
        },
      ],
      result: {
        content: [{ type: "text", text: JSON.stringify({ action: "accept", content: { name: "Ada" } }) }],
      },
    });
  });

  it("puts a URL-mode elicitation to a client that supports it, and declines it for one that does not", async () => {
    const withUrl = await client(prefixed, { capabilities: { elicitation: { form: {}, url: {} } } });
    const asked: unknown[] = [];
    withUrl.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return { action: "accept" };
    });
    const accepted = await withUrl.callTool({ name: "alpha__visit", arguments: {} });
    const formOnly = await (await client(prefixed, { capabilities: { elicitation: {} } })).callTool({
      name: "alpha__visit",
      arguments: {},
    });
    expect({ asked, accepted, formOnly }).toEqual({
      asked: [
        {
          mode: "url",
          message: "Sign in to Acme",
          url: "https://acme.example.com/connect",
          elicitationId: expect.any(String),
        },
      ],
      accepted: { content: [{ type: "text", text: JSON.stringify({ action: "accept" }) }] },
      formOnly: { content: [{ type: "text", text: JSON.stringify({ action: "decline" }) }] },
    });
  });

  it("relays sampling with tools to a client that declared it, and tells the server why not to one that did not", async () => {
    const withTools = await client(prefixed, { capabilities: { sampling: { tools: {} } } });
    const asked: unknown[] = [];
    withTools.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      asked.push(request.params.tools);
      return { role: "assistant", model: "test-model", content: { type: "text", text: "Pack an umbrella." } };
    });
    const answered = await withTools.callTool({ name: "alpha__plan", arguments: {} });
    const plain = await client(prefixed, { capabilities: { sampling: {} } });
    plain.setRequestHandler(CreateMessageRequestSchema, async () => ({
      role: "assistant",
      model: "test-model",
      content: { type: "text", text: "never asked" },
    }));
    const refused = await plain.callTool({ name: "alpha__plan", arguments: {} });
    expect({ asked, answered, refused: (refused.content as Array<{ text: string }>)[0]?.text }).toEqual({
      asked: [[{ name: "weather", inputSchema: { type: "object", properties: {} } }]],
      answered: { content: [{ type: "text", text: "Pack an umbrella." }] },
      refused: expect.stringContaining(
        "alpha's sampling/createMessage offers the model tools, and the MCP client that called this tool did not declare sampling with tools (sampling.tools)",
      ),
    });
  });

  it("declines the server's elicitation for a client without the elicitation capability", async () => {
    const result = await (await client(prefixed)).callTool({ name: "alpha__ask", arguments: {} });
    expect(result).toEqual({ content: [{ type: "text", text: JSON.stringify({ action: "decline" }) }] });
  });
});

describe("resources", () => {
  it("lists server-everything's resources and reads one by its URI", async () => {
    const connected = await client(prefixed);
    const { resources } = await connected.listResources();
    const architecture = resources.find((resource) => resource.name === "architecture.md");
    expect(architecture).toEqual({
      name: "architecture.md",
      uri: "demo://resource/static/document/architecture.md",
      description: "Static document file exposed from /docs: architecture.md",
      mimeType: "text/markdown",
    });
    const read = await connected.readResource({ uri: "demo://resource/static/document/architecture.md" });
    expect(read.contents.map((content) => ({ uri: content.uri, mimeType: content.mimeType }))).toEqual([
      { uri: "demo://resource/static/document/architecture.md", mimeType: "text/markdown" },
    ]);
    expect((read.contents[0] as { text: string }).text.length).toBeGreaterThan(0);
  });

  it("reads a resource from a template no list named", async () => {
    const read = await (await client(prefixed)).readResource({ uri: "demo://resource/dynamic/text/7" });
    expect(read.contents.map((content) => content.uri)).toEqual(["demo://resource/dynamic/text/7"]);
  });

  it("answers a URI no server has with resource-not-found", async () => {
    await expect((await client(prefixed)).readResource({ uri: "nowhere://nothing" })).rejects.toThrow(
      "MCP error -32602: Resource not found: nowhere://nothing. No server toolbus serves lists it or has a template matching it",
    );
  });
});

describe("notifications/tools/list_changed", () => {
  it("is sent when a server's tools change, and the new tool is listed", async () => {
    const connected = await client(conditional);
    let changes = 0;
    connected.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes += 1;
    });
    await beta.setScript({ tools: [{ name: "echo" }, { name: "fresh" }] });
    await eventually("tools/list_changed", () => (changes > 0 ? true : undefined));
    const { tools } = await connected.listTools();
    expect(
      tools.map((tool) => tool.name).filter((name) => name.startsWith("beta__") || name === "fresh"),
    ).toEqual(["beta__echo", "fresh"]);
  });

  it("is not sent when a server's entry changes and nothing a client lists changed", async () => {
    const connected = await client(conditional);
    let changes = 0;
    connected.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes += 1;
    });
    const kv = await new Kvm(stack.nc).open(stack.subjects.kv.catalog);
    const beta = (await kv.get(catalogKey("beta")))!.json<CatalogServerEntry>();
    // The same tools, listed again later: the revision moves, the listing does not.
    await kv.put(catalogKey("beta"), JSON.stringify({ ...beta, listedAt: new Date().toISOString() }));
    // Then a change that does alter the listing: changes arrive in order, so its notification
    // coming alone proves the first change was seen and not announced.
    await kv.put(catalogKey("zeta"), JSON.stringify({ ...beta, server: "zeta" }));
    try {
      await eventually("tools/list_changed", () => (changes > 0 ? true : undefined));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(changes).toBe(1);
    } finally {
      await kv.delete(catalogKey("zeta"));
    }
  });
});

describe("several replicas", () => {
  it("takes a client's answer to an elicitation on another replica back to the replica that asked", async () => {
    const post = (gateway: GatewayService, body: unknown, sessionId?: string) =>
      fetch(`${gateway.url}/mcp`, {
        method: "POST",
        headers: {
          accept: MCP_ACCEPT,
          "content-type": "application/json",
          ...(sessionId ? { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" } : {}),
        },
        body: JSON.stringify(body),
      });
    const init = await post(prefixed, {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: { elicitation: {} },
        clientInfo: { name: "raw-replicas", version: "1.0.0" },
      },
    });
    const sessionId = init.headers.get("mcp-session-id")!;
    await init.text();
    await (await post(prefixed, { jsonrpc: "2.0", method: "notifications/initialized" }, sessionId)).text();
    const call = await post(
      prefixed,
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "alpha__ask", arguments: {} } },
      sessionId,
    );
    const stream = sseMessages(call);
    try {
      const asked = await stream.next();
      expect(asked).toMatchObject({
        method: "elicitation/create",
        params: { message: "What is your name?" },
      });
      const answered = await post(
        conditional,
        { jsonrpc: "2.0", id: asked.id, result: { action: "accept", content: { name: "Grace" } } },
        sessionId,
      );
      expect(answered.status).toBe(202);
      expect(await stream.next()).toEqual({
        jsonrpc: "2.0",
        id: 2,
        result: {
          content: [{ type: "text", text: JSON.stringify({ action: "accept", content: { name: "Grace" } }) }],
        },
      });
    } finally {
      stream.cancel();
    }
  });
});

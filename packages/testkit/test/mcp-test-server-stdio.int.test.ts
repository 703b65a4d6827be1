// The MCP test server over stdio, driven by a real SDK client.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ErrorCode, McpError, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type StdioTestServer,
  startTestServer,
  type TestServerScript,
} from "../src/mcp-test-server/index.js";

const TINY_PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

const echoSchema = { type: "object", properties: { msg: { type: "string" } } };
const script: TestServerScript = {
  instructions: "Use echo to test.",
  tools: [
    { name: "echo", title: "Echo", description: "Echoes its arguments.", inputSchema: echoSchema },
    {
      name: "fail",
      annotations: { readOnlyHint: true },
      behavior: { kind: "error_result", text: "it broke" },
    },
    { name: "picture", behavior: { kind: "image" } },
    { name: "explode", behavior: { kind: "throw", message: "boom: try again later", code: -32001 } },
    { name: "stall", behavior: { kind: "hang" } },
  ],
};

async function connect(
  server: StdioTestServer,
): Promise<{ client: Client; transport: StdioClientTransport }> {
  const transport = new StdioClientTransport({ command: server.command, args: server.args, stderr: "pipe" });
  const client = new Client({ name: "testkit-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

/** Polls `check` every 20 ms until it holds; fails after 10 s. */
async function until(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out waiting for the test server's logs");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("the MCP test server over stdio", () => {
  let server: StdioTestServer;
  let client: Client;

  beforeAll(async () => {
    server = await startTestServer({ script, transport: "stdio" });
    ({ client } = await connect(server));
  });
  afterAll(async () => {
    await client?.close();
    await server?.dispose();
  });

  it("lists the scripted tools as written and sends the instructions", async () => {
    expect(client.getInstructions()).toBe("Use echo to test.");
    expect(await client.listTools()).toEqual({
      tools: [
        { name: "echo", title: "Echo", description: "Echoes its arguments.", inputSchema: echoSchema },
        { name: "fail", annotations: { readOnlyHint: true }, inputSchema: { type: "object" } },
        { name: "picture", inputSchema: { type: "object" } },
        { name: "explode", inputSchema: { type: "object" } },
        { name: "stall", inputSchema: { type: "object" } },
      ],
    });
  });

  it("answers echo, error_result and image calls as scripted", async () => {
    expect(await client.callTool({ name: "echo", arguments: { msg: "hi" } })).toEqual({
      content: [{ type: "text", text: '{"msg":"hi"}' }],
    });
    expect(await client.callTool({ name: "fail", arguments: {} })).toEqual({
      content: [{ type: "text", text: "it broke" }],
      isError: true,
    });
    expect(await client.callTool({ name: "picture" })).toEqual({
      content: [{ type: "image", data: TINY_PNG, mimeType: "image/png" }],
    });
  });

  it("answers a throw behaviour with a JSON-RPC error carrying the scripted code and message", async () => {
    const error = await client.callTool({ name: "explode" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect({ code: (error as McpError).code, message: (error as McpError).message }).toEqual({
      code: -32001,
      message: "MCP error -32001: boom: try again later",
    });
  });

  it("records each call with its arguments and _meta in the call log, and nothing for tools never called", async () => {
    await client.callTool({ name: "echo", arguments: { msg: "logged" }, _meta: { callId: "c-1" } });
    const calls = await server.calls();
    expect(calls.filter((call) => call.arguments?.msg === "logged")).toEqual([
      {
        at: expect.any(String),
        pid: expect.any(Number),
        tool: "echo",
        arguments: { msg: "logged" },
        _meta: { callId: "c-1" },
      },
    ]);
    expect(Number.isNaN(Date.parse(calls.at(-1)?.at ?? ""))).toBe(false);
    expect(calls.filter((call) => call.tool === "never-called")).toEqual([]);
  });

  it("ends a hanging call with the client's timeout and keeps serving", async () => {
    const error = await client
      .callTool({ name: "stall" }, undefined, { timeout: 300 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    // The code says the client's 300 ms timeout ended it (a stall never ends by itself); no clock.
    expect((error as McpError).code).toBe(ErrorCode.RequestTimeout);
    expect(await client.callTool({ name: "echo", arguments: { after: "stall" } })).toEqual({
      content: [{ type: "text", text: '{"after":"stall"}' }],
    });
  });

  it("records a call the client cancels while it runs, with the client's reason, in the cancellation log", async () => {
    const controller = new AbortController();
    const call = client
      .callTool({ name: "stall", _meta: { callId: "c-cancel" } }, undefined, { signal: controller.signal })
      .catch((e: unknown) => e);
    await until(async () => (await server.calls()).some((line) => line._meta?.callId === "c-cancel"));
    controller.abort("the test gave up");
    await call;
    await until(async () => (await server.cancellations()).some((line) => line._meta?.callId === "c-cancel"));
    expect((await server.cancellations()).filter((line) => line._meta?.callId === "c-cancel")).toEqual([
      { at: expect.any(String), tool: "stall", reason: "the test gave up", _meta: { callId: "c-cancel" } },
    ]);
  });

  it("sends tools/list_changed when the script's tools change, then lists the new tools", async () => {
    const changed = new Promise<void>((resolve) =>
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()),
    );
    await server.setScript({ tools: [{ name: "fresh", behavior: { kind: "text", text: "new" } }] });
    await changed;
    expect(await client.listTools()).toEqual({ tools: [{ name: "fresh", inputSchema: { type: "object" } }] });
    expect(await client.callTool({ name: "fresh" })).toEqual({ content: [{ type: "text", text: "new" }] });
  });

  it("applies a behaviour-only change without a list_changed notification", async () => {
    await server.setScript({ tools: [{ name: "fresh", behavior: { kind: "text", text: "one" } }] });
    let notified = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      notified++;
    });
    await server.setScript({ tools: [{ name: "fresh", behavior: { kind: "text", text: "two" } }] });
    expect(await client.callTool({ name: "fresh" })).toEqual({ content: [{ type: "text", text: "two" }] });
    expect(notified).toBe(0);
  });
});

describe("a crashing MCP test server", () => {
  it("ends the stdio transport and still logs the call that crashed it", async () => {
    const server = await startTestServer({
      script: { tools: [{ name: "die", behavior: { kind: "crash", exitCode: 3 } }] },
      transport: "stdio",
    });
    try {
      const { client } = await connect(server);
      const closed = new Promise<void>((resolve) => {
        client.onclose = () => resolve();
      });
      const error = await client.callTool({ name: "die" }).catch((e: unknown) => e);
      await closed;
      expect(error).toBeInstanceOf(McpError);
      expect((error as McpError).code).toBe(ErrorCode.ConnectionClosed);
      expect((await server.calls()).map((call) => call.tool)).toEqual(["die"]);
    } finally {
      await server.dispose();
    }
  });
});

describe("an MCP test server with resources", () => {
  it("reads a resource it leaves off its list, and logs every read with its URI", async () => {
    const server = await startTestServer({
      script: {
        resources: [
          { uri: "doc://listed", name: "listed", text: "on the list" },
          { uri: "doc://page/7", name: "page 7", text: "seven", unlisted: true },
        ],
        resourceTemplates: [{ uriTemplate: "doc://page/{n}", name: "page" }],
      },
      transport: "stdio",
    });
    try {
      const { client } = await connect(server);
      expect((await client.listResources()).resources).toEqual([{ uri: "doc://listed", name: "listed" }]);
      expect(await server.reads()).toEqual([]);
      expect((await client.readResource({ uri: "doc://page/7" })).contents).toEqual([
        { uri: "doc://page/7", text: "seven" },
      ]);
      // -32002 as the v1 SDK sent it (v2 alone would send -32602).
      await expect(client.readResource({ uri: "doc://page/8" })).rejects.toMatchObject({
        code: -32002,
        message: "MCP error -32002: Resource not found: doc://page/8",
      });
      expect((await server.reads()).map((read) => read.uri)).toEqual(["doc://page/7", "doc://page/8"]);
      await client.close();
    } finally {
      await server.dispose();
    }
  });
});

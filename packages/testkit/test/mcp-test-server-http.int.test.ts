// The MCP test server over streamable HTTP, driven by a real SDK client.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  ElicitRequestSchema,
  ListResourcesResultSchema,
  ListToolsResultSchema,
  LoggingMessageNotificationSchema,
  McpError,
  type Progress,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type HttpTestServer, startTestServer } from "../src/mcp-test-server/index.js";

async function connect(url: string): Promise<Client> {
  const client = new Client(
    { name: "testkit-test", version: "1.0.0" },
    { capabilities: { elicitation: { form: {} } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

describe("the MCP test server over streamable HTTP", () => {
  let server: HttpTestServer;
  let client: Client;

  beforeAll(async () => {
    server = await startTestServer({
      transport: "http",
      script: {
        tools: [
          { name: "echo" },
          { name: "ask", behavior: { kind: "elicit", message: "Pick a colour" } },
          { name: "work", behavior: { kind: "progress", count: 3, intervalMs: 1 } },
          { name: "big", behavior: { kind: "huge", bytes: 100_000 } },
          { name: "sound", behavior: { kind: "audio", data: "AAEC", mimeType: "audio/x-test" } },
          { name: "shape", behavior: { kind: "structured", value: { n: 1 } } },
          { name: "note", behavior: { kind: "log", level: "warning", data: { disk: "low" }, text: "noted" } },
        ],
        resources: [
          { uri: "test://a", name: "a", mimeType: "text/plain", text: "alpha" },
          { uri: "test://b", name: "b", blob: "AAEC" },
          { uri: "test://c", name: "c" },
        ],
        resourcesPageSize: 2,
      },
    });
    client = await connect(server.url);
  });
  afterAll(async () => {
    await client?.close();
    await server?.dispose();
  });

  it("serves at a 127.0.0.1 /mcp endpoint and echoes calls", async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(await client.callTool({ name: "echo", arguments: { over: "http" } })).toEqual({
      content: [{ type: "text", text: '{"over":"http"}' }],
    });
    expect((await server.calls()).filter((call) => call.tool === "echo")).toEqual([
      { at: expect.any(String), pid: expect.any(Number), tool: "echo", arguments: { over: "http" } },
    ]);
  });

  it("returns huge, audio and structured results as scripted", async () => {
    expect(await client.callTool({ name: "big" })).toEqual({
      content: [{ type: "text", text: "x".repeat(100_000) }],
    });
    expect(await client.callTool({ name: "sound" })).toEqual({
      content: [{ type: "audio", data: "AAEC", mimeType: "audio/x-test" }],
    });
    expect(await client.callTool({ name: "shape" })).toEqual({
      content: [{ type: "text", text: '{"n":1}' }],
      structuredContent: { n: 1 },
    });
  });

  it("sends a log notification to the client before the result", async () => {
    const logged = new Promise<unknown>((resolve) =>
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => resolve(n.params)),
    );
    const result = await client.callTool({ name: "note" });
    expect({ result, log: await logged }).toEqual({
      result: { content: [{ type: "text", text: "noted" }] },
      log: { level: "warning", logger: "mcp-test-server", data: { disk: "low" } },
    });
  });

  it("answers a call to an unknown tool with an invalid-params error and still logs it", async () => {
    const error = await client.callTool({ name: "nope" }).catch((e: unknown) => e);
    expect(error).toEqual(new McpError(-32602, "Unknown tool: nope"));
    expect((await server.calls()).filter((call) => call.tool === "nope")).toEqual([
      { at: expect.any(String), pid: expect.any(Number), tool: "nope" },
    ]);
  });

  it("asks the client through elicitation/create and returns its answer", async () => {
    client.setRequestHandler(ElicitRequestSchema, (request) => ({
      action: "accept",
      content: { colour: request.params.message === "Pick a colour" ? "blue" : "wrong prompt" },
    }));
    expect(await client.callTool({ name: "ask" })).toEqual({
      content: [{ type: "text", text: '{"action":"accept","content":{"colour":"blue"}}' }],
    });
  });

  it("sends the scripted number of progress notifications before the result", async () => {
    const seen: Progress[] = [];
    const result = await client.callTool({ name: "work" }, undefined, { onprogress: (p) => seen.push(p) });
    expect({ result, seen }).toEqual({
      result: { content: [{ type: "text", text: "done" }] },
      seen: [1, 2, 3].map((i) => ({ progress: i, total: 3, message: `step ${i} of 3` })),
    });
  });

  it("pages resources/list and reads text and blob resources", async () => {
    const first = await client.request({ method: "resources/list", params: {} }, ListResourcesResultSchema);
    const second = await client.request(
      { method: "resources/list", params: { cursor: first.nextCursor } },
      ListResourcesResultSchema,
    );
    expect({ first, second }).toEqual({
      first: {
        resources: [
          { uri: "test://a", name: "a", mimeType: "text/plain" },
          { uri: "test://b", name: "b" },
        ],
        nextCursor: "2",
      },
      second: { resources: [{ uri: "test://c", name: "c" }] },
    });
    expect(await client.readResource({ uri: "test://a" })).toEqual({
      contents: [{ uri: "test://a", mimeType: "text/plain", text: "alpha" }],
    });
    expect(await client.readResource({ uri: "test://b" })).toEqual({
      contents: [{ uri: "test://b", blob: "AAEC" }],
    });
  });

  it("pages tools/list by toolsPageSize over generated tools, and rejects a cursor it never issued", async () => {
    await server.setScript({ toolCount: 5, toolsPageSize: 2 });
    const pages: string[][] = [];
    let cursor: string | undefined;
    do {
      const result = await client.request(
        { method: "tools/list", params: cursor ? { cursor } : {} },
        ListToolsResultSchema,
      );
      pages.push(result.tools.map((tool) => tool.name));
      cursor = result.nextCursor;
    } while (cursor !== undefined);
    expect(pages).toEqual([["t0000", "t0001"], ["t0002", "t0003"], ["t0004"]]);
    const error = await client
      .request({ method: "tools/list", params: { cursor: "bogus" } }, ListToolsResultSchema)
      .catch((e: unknown) => e);
    expect(error).toEqual(new McpError(-32602, "Invalid cursor: bogus"));
  });

  it("returns the same cursor forever when cursorLoop is set", async () => {
    await server.setScript({ toolCount: 3, toolsPageSize: 1, cursorLoop: true });
    const first = await client.request({ method: "tools/list", params: {} }, ListToolsResultSchema);
    const again = await client.request(
      { method: "tools/list", params: { cursor: first.nextCursor } },
      ListToolsResultSchema,
    );
    expect(again).toEqual(first);
    expect(first.nextCursor).toBe("loop");
  });

  it("notifies tools and resources list changes to an HTTP session", async () => {
    const tools = new Promise<void>((resolve) =>
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()),
    );
    const resources = new Promise<void>((resolve) =>
      client.setNotificationHandler(ResourceListChangedNotificationSchema, () => resolve()),
    );
    await server.setScript({ tools: [{ name: "later" }], resources: [{ uri: "test://z", name: "z" }] });
    await Promise.all([tools, resources]);
    expect(await client.listTools()).toEqual({ tools: [{ name: "later", inputSchema: { type: "object" } }] });
    expect(await client.listResources()).toEqual({ resources: [{ uri: "test://z", name: "z" }] });
  });

  it("lists a tool without inputSchema as written when invalidToolSchemas is set", async () => {
    await server.setScript({
      invalidToolSchemas: true,
      tools: [{ name: "bare" }, { name: "nulltyped", inputSchema: { type: "null" } }],
    });
    const lenient = z.object({ tools: z.array(z.record(z.string(), z.unknown())) });
    expect(await client.request({ method: "tools/list", params: {} }, lenient)).toEqual({
      tools: [{ name: "bare" }, { name: "nulltyped", inputSchema: { type: "null" } }],
    });
  });
});

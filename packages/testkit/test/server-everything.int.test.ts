// The reference MCP server, launched through the testkit over stdio and streamable HTTP.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { describe, expect, it } from "vitest";
import { serverEverythingCommand, startServerEverythingHttp } from "../src/mcp-test-server/index.js";

async function listAndEcho(transport: Transport) {
  const client = new Client({ name: "testkit-test", version: "1.0.0" });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    const echo = await client.callTool({ name: "echo", arguments: { message: "hello" } });
    return { names: tools.map((tool) => tool.name), echo };
  } finally {
    await client.close();
  }
}

describe("server-everything", () => {
  it("lists its tools and echoes over stdio", async () => {
    const { command, args } = serverEverythingCommand();
    const { names, echo } = await listAndEcho(new StdioClientTransport({ command, args, stderr: "pipe" }));
    expect(names).toEqual(expect.arrayContaining(["echo", "get-sum", "get-tiny-image"]));
    expect(echo).toEqual({ content: [{ type: "text", text: "Echo: hello" }] });
  });

  it("lists its tools and echoes over streamable HTTP", async () => {
    const server = await startServerEverythingHttp();
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      const { names, echo } = await listAndEcho(new StreamableHTTPClientTransport(new URL(server.url)));
      expect(names).toEqual(expect.arrayContaining(["echo", "get-sum", "get-tiny-image"]));
      expect(echo).toEqual({ content: [{ type: "text", text: "Echo: hello" }] });
    } finally {
      await server.stop();
    }
  });
});

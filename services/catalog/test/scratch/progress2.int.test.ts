import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { startTestServer } from "@toolbus/testkit/mcp-test-server";
import { expect, it } from "vitest";
import { BoundedStdioClientTransport } from "../../src/adapters/mcp/bounded-transports.js";

it("progress direct", async () => {
  const s = await startTestServer({ transport: "stdio", script: { tools: [{ name: "work", behavior: { kind: "progress", count: 3, intervalMs: 5 } }] } });
  for (const bounded of [false, true]) {
    const client = new Client({ name: "x", version: "1" });
    client.onerror = (e) => console.log("onerror", e.message);
    const params = { command: s.command, args: s.args, stderr: "pipe" as const };
    await client.connect(bounded ? new BoundedStdioClientTransport(params, { maxMessageBytes: 1e6, dropped: () => {} }) : new StdioClientTransport(params));
    const got: unknown[] = [];
    const r = await client.request({ method: "tools/call", params: { name: "work" } }, CallToolResultSchema, { onprogress: (p) => got.push(p) });
    console.log(bounded, JSON.stringify(r), JSON.stringify(got));
    await client.close();
  }
  expect(1).toBe(1);
});

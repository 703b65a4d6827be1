/**
 * Both eras on both sides: a 2025 client (the v1 SDK's) and a 2026-07-28 client (the v2 SDK's,
 * pinned) against a 2025 server (over stdio) and a server that speaks 2026-07-28 alone (over
 * streamable HTTP, refusing 2025's initialize). Each of the four pairs lists, calls, answers the
 * server's elicitation and reads a resource through toolbus, every service and server real.
 */
import { Client as ModernClient, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { type HttpTestServer, type StdioTestServer, startTestServer } from "@toolbus/testkit/mcp-test-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayService } from "../src/gateway-service.js";
import { mcpClient, Stack, tomlFor } from "./support/stack.js";

const script = (server: string) => ({
  tools: [
    { name: "echo" },
    {
      name: "ask",
      behavior: {
        kind: "elicit" as const,
        message: `What should ${server} do?`,
        requestedSchema: { type: "object", properties: { answer: { type: "string" } } },
      },
    },
  ],
  resources: [
    { uri: `note://${server}`, name: server, mimeType: "text/plain", text: `a note from ${server}` },
  ],
});

let stack: Stack;
let gateway: GatewayService;
let old: StdioTestServer;
let modern: HttpTestServer;
const closers: Array<() => Promise<void>> = [];

/** What a client does with each server, and what it saw. */
interface Client4 {
  listTools(): Promise<string[]>;
  call(name: string, args: Record<string, unknown>): Promise<unknown>;
  read(uri: string): Promise<unknown>;
  asked: unknown[];
}

async function legacyClient(): Promise<Client4> {
  const client: Client = await mcpClient(gateway, { capabilities: { elicitation: { form: {} } } });
  closers.push(() => client.close());
  const asked: unknown[] = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params.message);
    return { action: "accept", content: { answer: "from a 2025 client" } };
  });
  return {
    asked,
    listTools: async () => (await client.listTools()).tools.map((tool) => tool.name),
    call: async (name, args) => (await client.callTool({ name, arguments: args })).content,
    read: async (uri) => (await client.readResource({ uri })).contents,
  };
}

async function modernClient(): Promise<Client4> {
  const client = new ModernClient(
    { name: "v2-client", version: "1.0.0" },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  const asked: unknown[] = [];
  client.setRequestHandler("elicitation/create", async (request) => {
    asked.push(request.params.message);
    return { action: "accept", content: { answer: "from a 2026 client" } };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`)));
  closers.push(() => client.close());
  return {
    asked,
    listTools: async () => (await client.listTools()).tools.map((tool) => tool.name),
    call: async (name, args) => (await client.callTool({ name, arguments: args })).content,
    read: async (uri) => (await client.readResource({ uri })).contents,
  };
}

beforeAll(async () => {
  old = await startTestServer({ transport: "stdio", script: script("old") });
  modern = await startTestServer({ transport: "http", era: "2026-07-28", script: script("modern") });
  stack = await Stack.start(
    "gw_four_pairs",
    `${tomlFor([{ name: "old", command: old.command, args: old.args }])}
[mcp_servers.modern]
url = ${JSON.stringify(modern.url)}
default_tools_approval_mode = "approve"
`,
  );
  stack.defer(() => old.dispose());
  stack.defer(() => modern.dispose());
  gateway = await stack.gateway();
}, 120_000);

afterAll(async () => {
  for (const close of closers) await close().catch(() => undefined);
  await stack?.close();
});

describe.each([
  ["2025", legacyClient, "from a 2025 client"],
  ["2026-07-28", modernClient, "from a 2026 client"],
] as const)("a %s client", (_era, connect, answer) => {
  it.each(["old", "modern"])(
    "lists, calls, answers an elicitation of and reads from the %s server",
    async (server) => {
      const client = await connect();
      const tools = await client.listTools();
      const echoed = await client.call(`${server}__echo`, { said: server });
      const asked = await client.call(`${server}__ask`, {});
      const read = await client.read(`note://${server}`);
      expect({
        tools: tools.filter((name) => name.startsWith(`${server}__`)),
        echoed,
        asked,
        questions: client.asked,
        read,
      }).toEqual({
        tools: [`${server}__ask`, `${server}__echo`],
        echoed: [{ type: "text", text: JSON.stringify({ said: server }) }],
        asked: [{ type: "text", text: JSON.stringify({ action: "accept", content: { answer } }) }],
        questions: [`What should ${server} do?`],
        read: [{ uri: `note://${server}`, mimeType: "text/plain", text: `a note from ${server}` }],
      });
    },
  );
});

it("reaches the 2026-07-28 server over that revision, and the 2025 server over 2025", async () => {
  const calls = await modern.calls();
  const headers = await modern.requestHeaders();
  expect({
    modernCalls: calls.map((call) => call.tool).sort(),
    versions: [...new Set(headers.map((line) => line.headers["mcp-protocol-version"]).filter(Boolean))],
  }).toEqual({ modernCalls: ["ask", "ask", "echo", "echo"], versions: ["2026-07-28"] });
});

/**
 * SEP-2243's custom headers through toolbus, every service and server real: a server that speaks
 * MCP 2026-07-28 alone lists a tool whose `region` and `priority` carry `x-mcp-header`. At the
 * edge, a 2026-07-28 `tools/call` whose `Mcp-Param-*` headers are missing, disagree with its
 * arguments or carry invalid Base64 is refused with 400 and -32020, and one whose headers agree
 * is served; the v2 SDK's client mirrors them itself from the gateway's listing. Upstream, the
 * server gets the headers rebuilt from its own listing and the call's arguments (Base64 for
 * non-ASCII), whichever era the caller spoke.
 */
import { Client as ModernClient, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { type HeaderLogLine, type HttpTestServer, startTestServer } from "@toolbus/testkit/mcp-test-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayService } from "../src/gateway-service.js";
import { MCP_ACCEPT } from "./support/http.js";
import { mcpClient, Stack } from "./support/stack.js";

const MODERN = "2026-07-28";
const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};
const TOOL = "geo__route";

let stack: Stack;
let gateway: GatewayService;
let geo: HttpTestServer;
const closers: Array<() => Promise<void>> = [];

/** A 2026-07-28 `tools/call` of the annotated tool by hand, with these Mcp-Param-* headers. */
async function callWith(
  args: Record<string, unknown>,
  paramHeaders: Record<string, string>,
): Promise<{ status: number; message: Record<string, unknown> }> {
  const response = await fetch(`${gateway.url}/mcp`, {
    method: "POST",
    headers: {
      accept: MCP_ACCEPT,
      "content-type": "application/json",
      "mcp-protocol-version": MODERN,
      "mcp-method": "tools/call",
      "mcp-name": TOOL,
      ...paramHeaders,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 11,
      method: "tools/call",
      params: { name: TOOL, arguments: args, _meta: ENVELOPE },
    }),
  });
  const text = await response.text();
  // A JSON body, or the last message of an SSE stream.
  const json = response.headers.get("content-type")?.includes("text/event-stream")
    ? (text
        .split("\n")
        .filter((line) => line.startsWith("data: "))
        .at(-1)
        ?.slice("data: ".length) ?? "null")
    : text;
  return { status: response.status, message: JSON.parse(json) as Record<string, unknown> };
}

/** The Mcp-Param-* headers of each tools/call the server received since `from`, in order. */
async function paramHeadersReceived(from: number): Promise<Array<Record<string, unknown>>> {
  const lines: HeaderLogLine[] = (await geo.requestHeaders()).slice(from);
  return lines
    .filter((line) => line.headers["mcp-method"] === "tools/call")
    .map((line) =>
      Object.fromEntries(Object.entries(line.headers).filter(([name]) => name.startsWith("mcp-param-"))),
    );
}

beforeAll(async () => {
  geo = await startTestServer({
    transport: "http",
    era: MODERN,
    script: {
      tools: [
        {
          name: "route",
          inputSchema: {
            type: "object",
            properties: {
              region: { type: "string", "x-mcp-header": "Region" },
              priority: { type: "integer", "x-mcp-header": "Priority" },
              query: { type: "string" },
            },
            required: ["region"],
          },
        },
      ],
    },
  });
  stack = await Stack.start(
    "gw_param_headers",
    `[mcp_servers.geo]
url = ${JSON.stringify(geo.url)}
default_tools_approval_mode = "approve"
`,
  );
  stack.defer(() => geo.dispose());
  gateway = await stack.gateway();
}, 120_000);

afterAll(async () => {
  for (const close of closers) await close().catch(() => undefined);
  await stack?.close();
});

describe("the 2026-07-28 edge", () => {
  it("lists the server's x-mcp-header annotations as the server did", async () => {
    const client = await mcpClient(gateway);
    closers.push(() => client.close());
    const { tools } = await client.listTools();
    expect(tools.find((tool) => tool.name === TOOL)?.inputSchema.properties).toEqual({
      region: { type: "string", "x-mcp-header": "Region" },
      priority: { type: "integer", "x-mcp-header": "Priority" },
      query: { type: "string" },
    });
  });

  it("refuses a missing, a mismatched and an invalid Base64 Mcp-Param header with 400 and -32020", async () => {
    const before = (await geo.requestHeaders()).length;
    const missing = await callWith({ region: "eu-west", priority: 3 }, { "Mcp-Param-Priority": "3" });
    const mismatched = await callWith(
      { region: "eu-west", priority: 3 },
      { "Mcp-Param-Region": "us-east", "Mcp-Param-Priority": "3" },
    );
    const invalidBase64 = await callWith({ region: "Hello" }, { "Mcp-Param-Region": "=?base64?SGVsbG8?=" });
    const refusal = (answer: { status: number; message: Record<string, unknown> }) => ({
      status: answer.status,
      id: answer.message.id,
      code: (answer.message.error as { code?: number } | undefined)?.code,
      header: (answer.message.error as { data?: { mismatch?: { header?: string } } } | undefined)?.data
        ?.mismatch?.header,
    });
    expect([refusal(missing), refusal(mismatched), refusal(invalidBase64)]).toEqual([
      { status: 400, id: 11, code: -32020, header: "Mcp-Param-Region" },
      { status: 400, id: 11, code: -32020, header: "Mcp-Param-Region" },
      { status: 400, id: 11, code: -32020, header: "Mcp-Param-Region" },
    ]);
    // Refused at the edge: the server never saw them.
    expect(await paramHeadersReceived(before)).toEqual([]);
  });

  it("serves a call whose headers agree with its arguments: Base64, literal, numeric, or absent with the value", async () => {
    const answers = await Promise.all([
      callWith(
        { region: "Hello, 世界", priority: 42 },
        { "Mcp-Param-Region": "=?base64?SGVsbG8sIOS4lueVjA==?=", "Mcp-Param-Priority": "42.0" },
      ),
      // Without the whole =?base64?…?= wrapper a value is literal.
      callWith({ region: "=?base64?SGVsbG8=" }, { "Mcp-Param-Region": "=?base64?SGVsbG8=" }),
      // A null argument expects no header.
      callWith({ region: "eu-west", priority: null }, { "mcp-param-region": "eu-west" }),
    ]);
    expect(answers.map((answer) => [answer.status, answer.message.error])).toEqual([
      [200, undefined],
      [200, undefined],
      [200, undefined],
    ]);
    expect(answers.map((answer) => (answer.message.result as { content?: unknown }).content)).toEqual([
      [{ type: "text", text: JSON.stringify({ region: "Hello, 世界", priority: 42 }) }],
      [{ type: "text", text: JSON.stringify({ region: "=?base64?SGVsbG8=" }) }],
      [{ type: "text", text: JSON.stringify({ region: "eu-west", priority: null }) }],
    ]);
  });
});

describe("a call to the 2026-07-28 server", () => {
  it("carries the Mcp-Param headers rebuilt from the server's listing, from a 2026-07-28 client", async () => {
    const client = new ModernClient(
      { name: "v2-client", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: MODERN } } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`)));
    closers.push(() => client.close());
    // The v2 client mirrors from a listing it holds: the gateway's.
    await client.listTools();
    const before = (await geo.requestHeaders()).length;
    const result = await client.callTool({
      name: TOOL,
      arguments: { region: " São Paulo ", priority: 7, query: "SELECT 1" },
    });
    expect(result.isError).toBeFalsy();
    expect(await paramHeadersReceived(before)).toEqual([
      { "mcp-param-region": "=?base64?IFPDo28gUGF1bG8g?=", "mcp-param-priority": "7" },
    ]);
  });

  it("carries them for a 2025 client too, which sends none", async () => {
    const client = await mcpClient(gateway);
    closers.push(() => client.close());
    const before = (await geo.requestHeaders()).length;
    const result = await client.callTool({ name: TOOL, arguments: { region: "eu-west", query: "q" } });
    expect(result.isError).toBeFalsy();
    expect(await paramHeadersReceived(before)).toEqual([{ "mcp-param-region": "eu-west" }]);
  });
});

/**
 * What the model is told through the edge (docs/reference-behavior.md §3.4 and §8): every server's
 * instructions in the gateway's own `initialize`, bounded; input schemas cleaned as the
 * reference cleans them; tools no model could call left out with the reference's warning;
 * server info in the catalog; and the resource tools — listed unless turned off, with the
 * reference's arguments, messages, events and truncation. Real catalog and dispatcher (child
 * processes) and the testkit's MCP test server behind them.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Subscription } from "@nats-io/transport-node";
import type { CallBeginEvent, CallEndEvent } from "@toolbus/protocol";
import { type StdioTestServer, startTestServer } from "@toolbus/testkit/mcp-test-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CUT_MARKER,
  GATEWAY_INTRO,
  MAX_GATEWAY_INSTRUCTIONS_BYTES,
} from "../src/core/gateway-instructions.js";
import type { GatewayService } from "../src/gateway-service.js";
import { eventually, mcpClient, Stack, tomlFor } from "./support/stack.js";

const RESOURCE_TOOLS = ["list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"];
const DOCS_INSTRUCTIONS = "  Search the manual before answering.\nCite the page you used.  \n";
const DOCS_INFO = {
  title: "Docs Server",
  version: "2.1.0",
  description: "The product manual.",
  websiteUrl: "https://docs.example.com",
  icons: [{ src: "data:image/png;base64,iVBORw0KGgo=", mimeType: "image/png" }],
};
const BIG_TEXT = "0123456789".repeat(2_000);
const APP_ICONS = [{ src: "https://notes.example.com/board.svg", mimeType: "image/svg+xml", sizes: ["any"] }];
const description = "A long description of this parameter. ".repeat(6);

let stack: Stack;
let docs: StdioTestServer;
let notes: StdioTestServer;
let verbose: StdioTestServer;
let gateway: GatewayService;
let withoutResourceTools: GatewayService;
let events: Subscription;
const begins: CallBeginEvent[] = [];
const ends: CallEndEvent[] = [];
const clients: Client[] = [];

async function client(target: GatewayService = gateway): Promise<Client> {
  const connected = await mcpClient(target);
  clients.push(connected);
  return connected;
}

beforeAll(async () => {
  docs = await startTestServer({
    transport: "stdio",
    script: {
      instructions: DOCS_INSTRUCTIONS,
      serverInfo: DOCS_INFO,
      tools: [
        {
          name: "messy",
          inputSchema: {
            type: "object",
            properties: {
              flag: true,
              kind: { const: "a" },
              tags: { type: "array" },
              when: { format: "date" },
              user: { $ref: "#/$defs/User" },
            },
            $defs: { User: { properties: { name: { type: "string" } } }, Unused: { type: "string" } },
          },
        },
        {
          name: "bulky",
          inputSchema: {
            type: "object",
            properties: Object.fromEntries(
              Array.from({ length: 30 }, (_, i) => [`p${i}`, { type: "string", description }]),
            ),
          },
        },
        { name: "nothing", inputSchema: { type: "null" } },
        { name: "shapeless", inputSchema: null },
      ],
      resources: [
        { uri: "docs://guide", name: "guide", mimeType: "text/plain", text: "Read me first." },
        { uri: "docs://big", name: "big", mimeType: "text/plain", text: BIG_TEXT },
      ],
      resourceTemplates: [{ uriTemplate: "docs://page/{n}", name: "page" }],
      resourcesPageSize: 1,
    },
  });
  notes = await startTestServer({
    transport: "stdio",
    script: {
      instructions: "Notes are short.",
      tools: [
        { name: "echo" },
        // An MCP App: its UI resource and icons must reach the client, or the app cannot render.
        {
          name: "board",
          icons: APP_ICONS,
          _meta: {
            ui: { resourceUri: "ui://notes/board.html" },
            "example.com/extra": { n: 1 },
            connector_id: "forged",
          },
        },
        { name: "overdressed", _meta: { blob: "m".repeat(20_000) }, icons: [{ src: "i".repeat(70_000) }] },
      ],
      resources: [{ uri: "notes://today", name: "today", text: "Nothing yet." }],
    },
  });
  verbose = await startTestServer({
    transport: "stdio",
    script: { instructions: "v".repeat(40_000), tools: [{ name: "echo" }] },
  });
  stack = await Stack.start(
    "gw_model_view",
    tomlFor([
      { name: "docs", command: docs.command, args: docs.args },
      { name: "notes", command: notes.command, args: notes.args },
      { name: "verbose", command: verbose.command, args: verbose.args },
    ]),
  );
  stack.defer(() => docs.dispose());
  stack.defer(() => notes.dispose());
  stack.defer(() => verbose.dispose());
  events = stack.nc.subscribe(`${stack.prefix}.events.call.*`, {
    callback: (_error, msg) => {
      if (msg.subject === stack.subjects.callBegin) begins.push(msg.json<CallBeginEvent>());
      else ends.push(msg.json<CallEndEvent>());
    },
  });
  gateway = await stack.gateway();
  withoutResourceTools = await stack.gateway({ resourceTools: false });
}, 90_000);

afterAll(async () => {
  for (const connected of clients) await connected.close().catch(() => undefined);
  events?.unsubscribe();
  await stack?.close();
});

const utf8Bytes = (text: string) => new TextEncoder().encode(text).length;

describe("what a server declares for clients to render", () => {
  it("passes a tool's icons and _meta (an MCP App's ui.resourceUri) through, bounded, without forged connector keys", async () => {
    const { tools } = await (await client()).listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect({
      board: { icons: byName.get("notes__board")?.icons, _meta: byName.get("notes__board")?._meta },
      overdressed: {
        icons: byName.get("notes__overdressed")?.icons,
        _meta: byName.get("notes__overdressed")?._meta,
      },
      echo: Object.keys(byName.get("notes__echo") ?? {}).filter((key) => key === "icons" || key === "_meta"),
    }).toEqual({
      board: {
        icons: APP_ICONS,
        _meta: { ui: { resourceUri: "ui://notes/board.html" }, "example.com/extra": { n: 1 } },
      },
      // Over 64 KiB of icons and 16 KiB of _meta: listed without them.
      overdressed: { icons: undefined, _meta: undefined },
      echo: [],
    });
  });
});

describe("the gateway's initialize instructions", () => {
  it("[20] carry one section per server, its trimmed instructions, by name", async () => {
    const instructions = (await client()).getInstructions() ?? "";
    expect(instructions.startsWith(`${GATEWAY_INTRO}\n`)).toBe(true);
    expect(instructions).toContain(
      "\n\n## docs\nSearch the manual before answering.\nCite the page you used.\n\n## notes\nNotes are short.\n\n## verbose\nvvv",
    );
  });

  it("are bounded: a server's overlong instructions are cut to fit, and marked", async () => {
    const instructions = (await client()).getInstructions() ?? "";
    expect(utf8Bytes(instructions)).toBeLessThanOrEqual(MAX_GATEWAY_INSTRUCTIONS_BYTES);
    expect(instructions.endsWith(CUT_MARKER)).toBe(true);
  });
});

describe("tools/list through the edge", () => {
  it("shows input schemas cleaned as the reference cleans them: boolean schemas, const, types, $defs", async () => {
    const { tools } = await (await client()).listTools();
    expect(tools.find((tool) => tool.name === "docs__messy")?.inputSchema).toEqual({
      type: "object",
      properties: {
        flag: { type: "string" },
        kind: { enum: ["a"], type: "string" },
        tags: { type: "array", items: { type: "string" } },
        when: { format: "date", type: "string" },
        user: { $ref: "#/$defs/User" },
      },
      $defs: { User: { type: "object", properties: { name: { type: "string" } } } },
    });
  });

  it("compacts a schema over 5,000 bytes: descriptions go first", async () => {
    const { tools } = await (await client()).listTools();
    expect(tools.find((tool) => tool.name === "docs__bulky")?.inputSchema).toEqual({
      type: "object",
      properties: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`p${i}`, { type: "string" }])),
    });
  });

  it("[21] leaves out a tool whose schema is null-rooted or not an object, with the reference's warning", async () => {
    const { tools } = await (await client()).listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).not.toContain("docs__nothing");
    expect(names).not.toContain("docs__shapeless");
    const warnings = stack.logs
      .filter((line) => line.startsWith("catalog: "))
      .map(
        (line) =>
          JSON.parse(line.slice("catalog: ".length)) as { level: number; server?: string; msg: string },
      )
      .filter((entry) => entry.msg.startsWith("Failed to convert"));
    // One warning per tool each time the server's tools are listed.
    const distinct = [...new Set(warnings.map(({ server, msg }) => JSON.stringify({ server, msg })))];
    expect(distinct.map((warning) => JSON.parse(warning))).toEqual([
      {
        server: "docs",
        msg: "Failed to convert `nothing` MCP tool to OpenAI tool: tool input schema must not be a singleton null type",
      },
      {
        server: "docs",
        msg: "Failed to convert `shapeless` MCP tool to OpenAI tool: the input schema is null, not a JSON object",
      },
    ]);
    expect(warnings.every((entry) => entry.level === 40)).toBe(true);
  });
});

describe("server info", () => {
  it("is kept in the catalog with the server's instructions, as the servers route shows them", async () => {
    const response = await fetch(`${gateway.url}/v1/servers`);
    const { servers } = (await response.json()) as {
      servers: Array<{ name: string; serverInfo?: unknown; instructions?: string }>;
    };
    const byName = new Map(servers.map((server) => [server.name, server]));
    expect(byName.get("docs")).toMatchObject({
      serverInfo: { name: "toolbus-mcp-test-server", ...DOCS_INFO },
      instructions: "Search the manual before answering.\nCite the page you used.",
    });
    expect(byName.get("notes")).toMatchObject({
      serverInfo: { name: "toolbus-mcp-test-server", version: "0.1.0" },
      instructions: "Notes are short.",
    });
  });
});

/** The begin and end events of the call with these arguments, once its end has arrived. */
async function eventsOf(tool: string, args: unknown): Promise<{ begin: CallBeginEvent; end: CallEndEvent }> {
  const same = (event: CallBeginEvent) =>
    event.invocation.tool === tool && JSON.stringify(event.invocation.arguments) === JSON.stringify(args);
  const end = await eventually(`the end event of ${tool} ${JSON.stringify(args)}`, () => ends.find(same));
  const begin = begins.find((event) => event.callId === end.callId);
  if (!begin) throw new Error(`no begin event for ${end.callId}`);
  return { begin, end };
}

function textOf(result: unknown): string {
  const content = (result as { content: Array<{ type: string; text?: string }> }).content;
  expect(content).toHaveLength(1);
  expect(content[0]?.type).toBe("text");
  return content[0]?.text ?? "";
}

describe("the resource tools (§8)", () => {
  it("are listed first by default, and not at all with resource_tools = false", async () => {
    const listed = (await (await client()).listTools()).tools.map((tool) => tool.name);
    expect(listed.slice(0, 3)).toEqual(RESOURCE_TOOLS);
    const without = (await (await client(withoutResourceTools)).listTools()).tools.map((tool) => tool.name);
    expect(without.filter((name) => RESOURCE_TOOLS.includes(name))).toEqual([]);
    await expect(
      (await client(withoutResourceTools)).callTool({ name: "list_mcp_resources", arguments: {} }),
    ).rejects.toThrow(/Unknown tool: list_mcp_resources/);
  });

  it("[51] list every server's resources, sorted by server, each with its server, no cursor", async () => {
    const result = await (await client()).callTool({ name: "list_mcp_resources", arguments: {} });
    const text = textOf(result);
    expect(result.isError).toBeFalsy();
    expect(text.startsWith('{"resources":[{"server":"docs",')).toBe(true);
    expect(JSON.parse(text)).toEqual({
      resources: [
        { server: "docs", uri: "docs://guide", name: "guide", mimeType: "text/plain" },
        { server: "docs", uri: "docs://big", name: "big", mimeType: "text/plain" },
        { server: "notes", uri: "notes://today", name: "today" },
      ],
    });
    const { begin, end } = await eventsOf("list_mcp_resources", {});
    expect(begin.invocation.server).toBe("toolbus");
    expect(end.status).toBe("completed");
    expect(end.result).toEqual({ ok: { content: [{ type: "text", text }], isError: false } });
  });

  it("[52] list one server's page with its nextCursor, then the next page", async () => {
    const connected = await client();
    const first = textOf(
      await connected.callTool({ name: "list_mcp_resources", arguments: { server: "docs" } }),
    );
    expect(JSON.parse(first)).toEqual({
      server: "docs",
      resources: [{ server: "docs", uri: "docs://guide", name: "guide", mimeType: "text/plain" }],
      nextCursor: "1",
    });
    const second = textOf(
      await connected.callTool({ name: "list_mcp_resources", arguments: { server: " docs ", cursor: "1" } }),
    );
    expect(JSON.parse(second)).toEqual({
      server: "docs",
      resources: [{ server: "docs", uri: "docs://big", name: "big", mimeType: "text/plain" }],
    });
  });

  it("[51] refuse a cursor without a server, after the call began", async () => {
    const result = await (await client()).callTool({
      name: "list_mcp_resources",
      arguments: { cursor: "1" },
    });
    expect(result).toEqual({
      content: [{ type: "text", text: "cursor can only be used when a server is specified" }],
      isError: true,
    });
    const { begin, end } = await eventsOf("list_mcp_resources", { cursor: "1" });
    expect(begin.invocation).toEqual({
      server: "toolbus",
      tool: "list_mcp_resources",
      arguments: { cursor: "1" },
    });
    expect(end).toMatchObject({
      status: "failed",
      result: { err: "cursor can only be used when a server is specified" },
    });
  });

  it("list resource templates", async () => {
    const text = textOf(
      await (await client()).callTool({ name: "list_mcp_resource_templates", arguments: {} }),
    );
    expect(JSON.parse(text)).toEqual({
      resourceTemplates: [{ server: "docs", uriTemplate: "docs://page/{n}", name: "page" }],
    });
  });

  it("[53] read a resource: the payload as JSON, and a completed item with isError false", async () => {
    const args = { server: "docs", uri: "docs://guide" };
    const result = await (await client()).callTool({ name: "read_mcp_resource", arguments: args });
    const text = textOf(result);
    expect(result.isError).toBeFalsy();
    expect(JSON.parse(text)).toEqual({
      server: "docs",
      uri: "docs://guide",
      contents: [{ uri: "docs://guide", mimeType: "text/plain", text: "Read me first." }],
    });
    const { begin, end } = await eventsOf("read_mcp_resource", args);
    expect(begin.invocation).toEqual({ server: "docs", tool: "read_mcp_resource", arguments: args });
    expect(end).toMatchObject({
      status: "completed",
      result: { ok: { content: [{ type: "text", text }], isError: false } },
    });
  });

  it("[52] refuse a blank server before anything begins: no events", async () => {
    const connected = await client();
    const blank = { server: " ", uri: "x" };
    expect(await connected.callTool({ name: "read_mcp_resource", arguments: blank })).toEqual({
      content: [{ type: "text", text: "server must be provided" }],
      isError: true,
    });
    // A later call's end has arrived, so any event of the refused one would have too.
    const marker = { server: "notes" };
    await connected.callTool({ name: "list_mcp_resource_templates", arguments: marker });
    await eventsOf("list_mcp_resource_templates", marker);
    expect(
      begins.filter((event) => JSON.stringify(event.invocation.arguments) === JSON.stringify(blank)),
    ).toEqual([]);
  });

  it("[53] fail a read the server refuses with `resources/read failed: …` and a failed item", async () => {
    const args = { server: "docs", uri: "docs://missing" };
    const result = await (await client()).callTool({ name: "read_mcp_resource", arguments: args });
    const text = textOf(result);
    expect(result.isError).toBe(true);
    expect(text).toMatch(
      /^resources\/read failed: resources\/read failed for `docs` \(docs:\/\/missing\): .*Resource not found: docs:\/\/missing/,
    );
    const { end } = await eventsOf("read_mcp_resource", args);
    expect(end).toMatchObject({ status: "failed", result: { err: text } });
  });

  it("[53] truncate the payload to the model's policy × 1.2, keeping the whole in the event", async () => {
    const args = { server: "docs", uri: "docs://big" };
    const result = await (await client()).callTool({ name: "read_mcp_resource", arguments: args });
    const { end } = await eventsOf("read_mcp_resource", args);
    const whole = (end.result as { ok: { content: Array<{ text: string }> } }).ok.content[0]?.text ?? "";
    expect(JSON.parse(whole)).toEqual({
      server: "docs",
      uri: "docs://big",
      contents: [{ uri: "docs://big", mimeType: "text/plain", text: BIG_TEXT }],
    });
    // bytes:10000 × 1.2 = 12,000 bytes: half before the marker, half after (all ASCII here).
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe(
      `${whole.slice(0, 6_000)}…${whole.length - 12_000} chars truncated…${whole.slice(-6_000)}`,
    );
  });
});

// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} placeholders are the .mcp.json syntax under test.
import { describe, expect, it } from "vitest";
import { parseMcpJson } from "../src/mcp-json.js";
import type { McpServerConfig } from "../src/mcp-server.js";
import { DEFAULT_BUS_CONFIG } from "../src/tables.js";
import { parseToolbusToml } from "../src/toolbus-toml.js";
import { problemsOf } from "./problems-of.js";

const path = "/home/dev/project/.mcp.json";
const parse = (json: unknown) => parseMcpJson(JSON.stringify(json), { path });
const servers = (mcpServers: unknown) => parse({ mcpServers }).mcpServers;
const problems = (mcpServers: unknown) => problemsOf(() => parse({ mcpServers }));

const common = {
  enabled: true,
  required: false,
  startupTimeoutMs: 30_000,
  toolTimeoutMs: 300_000,
  defaultToolsApprovalMode: "auto",
  tools: {},
  supportsParallelToolCalls: false,
  environmentId: "local",
  omitToolsFrom: [],
} as const;

describe(".mcp.json (Claude Desktop, Claude Code, Cursor)", () => {
  it("reads a Claude Desktop stdio server into the same shape as toolbus.toml", () => {
    const fromJson = servers({
      files: { command: "npx", args: ["-y", "@scope/files", "/srv"], env: { LOG: "debug" }, cwd: "/srv" },
    });
    const fromToml = parseToolbusToml(
      '[mcp_servers.files]\ncommand = "npx"\nargs = ["-y", "@scope/files", "/srv"]\nenv = { LOG = "debug" }\ncwd = "/srv"',
      { path: "/x/toolbus.toml" },
    ).mcpServers;
    expect(fromJson).toEqual(fromToml);
    expect(fromJson).toEqual({
      files: {
        ...common,
        name: "files",
        transport: "stdio",
        command: "npx",
        args: ["-y", "@scope/files", "/srv"],
        env: { LOG: "debug" },
        envVars: [],
        cwd: "/srv",
      },
    });
  });

  it('turns "NAME": "${NAME}" in env into a pass-through of the parent variable', () => {
    expect(
      servers({ s: { type: "stdio", command: "srv", env: { API_KEY: "${API_KEY}", MODE: "fast" } } }),
    ).toEqual({
      s: {
        ...common,
        name: "s",
        transport: "stdio",
        command: "srv",
        args: [],
        env: { MODE: "fast" },
        envVars: [{ name: "API_KEY", source: "local" }],
      },
    });
  });

  const http = (overrides: Partial<McpServerConfig>) => ({
    ...common,
    name: "remote",
    transport: "streamable_http",
    url: "https://mcp.example.com/mcp",
    legacySse: false,
    httpHeaders: {},
    envHttpHeaders: {},
    auth: "oauth",
    ...overrides,
  });

  it.each([
    ["type http", { type: "http" }, {}],
    ["type streamable-http", { type: "streamable-http" }, {}],
    ["no type (Cursor)", {}, {}],
    ["type sse", { type: "sse" }, { legacySse: true }],
  ])("reads an HTTP server with %s", (_, type, expected) => {
    expect(servers({ remote: { ...type, url: "https://mcp.example.com/mcp" } })).toEqual({
      remote: http(expected),
    });
  });

  it("keeps literal headers, and turns ${VAR} headers into variables read at connect time", () => {
    const headers = { "X-Team": "tools", "X-Api-Key": "${ACME_KEY}", Authorization: "Bearer ${ACME_TOKEN}" };
    expect(servers({ remote: { type: "http", url: "https://mcp.example.com/mcp", headers } })).toEqual({
      remote: http({
        httpHeaders: { "X-Team": "tools" },
        envHttpHeaders: { "X-Api-Key": "ACME_KEY" },
        bearerTokenEnvVar: "ACME_TOKEN",
      }),
    });
  });

  it("ignores the host application's other top-level settings and takes toolbus defaults for the rest", () => {
    expect(parse({ globalShortcut: "Ctrl+Space", mcpServers: {} })).toEqual({
      source: { kind: "file", path, format: "mcp_json" },
      mcpServers: {},
      gateway: {
        port: 8080,
        host: "127.0.0.1",
        naming: "prefixed",
        allowedHosts: ["localhost", "127.0.0.1", "[::1]"],
        allowUnauthenticated: false,
        elicitApprovals: true,
        resourceTools: true,
        maxSessionsPerClient: 1000,
        maxBatchSize: 50,
        maxStreams: 2000,
        maxStreamsPerClient: 200,
        taskAfterMs: 2_000,
      },
      catalog: { nameLimit: 64, prefixMcp: true },
      approvals: { timeoutMs: 600_000, port: 8081, maxConcurrentHooks: 16, selfApprove: false },
      memory: { batchSize: 500, maxDeliveries: 5, redeliveryDelayMs: 1_000, ackWaitMs: 30_000 },
      bus: DEFAULT_BUS_CONFIG,
      views: {},
    });
  });

  it.each([
    ["no command or url", { env: {} }, [{ at: "mcpServers.s", message: "invalid transport" }]],
    [
      "type stdio without a command",
      { type: "stdio" },
      [{ at: "mcpServers.s", message: "type `stdio` needs a `command`" }],
    ],
    [
      "type sse without a url",
      { type: "sse" },
      [{ at: "mcpServers.s", message: "type `sse` needs a `url`" }],
    ],
    [
      "command on an HTTP server",
      { type: "http", url: "https://x.example", command: "srv", args: [] },
      [
        { at: "mcpServers.s", message: "command is not supported for streamable_http" },
        { at: "mcpServers.s", message: "args is not supported for streamable_http" },
      ],
    ],
    [
      "headers on a stdio server",
      { command: "srv", url: "https://x.example", headers: {} },
      [
        { at: "mcpServers.s", message: "url is not supported for stdio" },
        { at: "mcpServers.s", message: "headers is not supported for stdio" },
      ],
    ],
    [
      "an unknown type",
      { type: "websocket", url: "https://x.example" },
      [
        {
          at: "mcpServers.s.type",
          message: 'expected one of `stdio`, `http`, `streamable-http`, `sse`, got "websocket"',
        },
      ],
    ],
    [
      "an unknown key",
      { command: "srv", disabled: true },
      [{ at: "mcpServers.s", message: "unknown key `disabled`" }],
    ],
    [
      "a non-string arg",
      { command: "srv", args: [1] },
      [{ at: "mcpServers.s.args[0]", message: "expected a string, got 1" }],
    ],
    ["a server that is not an object", 5, [{ at: "mcpServers.s", message: "expected an object, got 5" }]],
    [
      "${VAR} in args",
      { command: "srv", args: ["--token=${TOKEN}"] },
      [
        {
          at: "mcpServers.s.args[0]",
          message: "${...} expansion is not supported here; write the value itself",
        },
      ],
    ],
    [
      "a renamed variable in env",
      { command: "srv", env: { KEY: "${OTHER}" } },
      [
        {
          at: "mcpServers.s.env.KEY",
          message:
            '${...} expansion is not supported here; pass a variable through as "KEY": "${KEY}" or write the value',
        },
      ],
    ],
    [
      "a default in a header placeholder",
      { url: "https://x.example", headers: { "X-Key": "${KEY:-none}" } },
      [
        {
          at: "mcpServers.s.headers.X-Key",
          message:
            '${...} expansion is not supported here; use "X-Key": "${VAR}" (or "Authorization": "Bearer ${VAR}") or write the value',
        },
      ],
    ],
  ])("rejects %s", (_, server, expected) => {
    expect(problems({ s: server })).toEqual(expected);
  });

  it("leaves a bad server name to the catalog's start-up", () => {
    expect(Object.keys(servers({ "my server": { command: "srv" }, ok: { command: "srv" } }))).toEqual([
      "my server",
      "ok",
    ]);
  });

  it("lists the problems of every server at once", () => {
    expect(problems({ ok: { command: "srv" }, a: {}, b: { type: "http" }, c: { command: 5 } })).toEqual([
      { at: "mcpServers.a", message: "invalid transport" },
      { at: "mcpServers.b", message: "type `http` needs a `url`" },
      { at: "mcpServers.c.command", message: "expected a string, got 5" },
    ]);
  });

  it("refuses a server name given twice, where JSON would keep the last one silently", () => {
    const text = [
      "{",
      '  "mcpServers": {',
      '    "files": { "command": "npx", "args": ["-y", "server-filesystem", "./docs"] },',
      '    "other": { "command": "srv", "env": { "files": "not a server" } },',
      '    "files": { "command": "npx", "args": ["-y", "server-filesystem", "/tmp"] }',
      "  },",
      '  "files": "not a server either"',
      "}",
    ].join("\n");
    expect(problemsOf(() => parseMcpJson(text, { path }))).toEqual([
      {
        at: "mcpServers.files",
        message:
          "is given 2 times (lines 3, 5); JSON keeps only the last, so give each server a name of its own",
      },
    ]);
  });

  it.each([
    ["{ not json", [{ at: "", message: expect.stringMatching(/^invalid JSON: /) }]],
    ["{}", [{ at: "mcpServers", message: "expected an object of MCP servers, got nothing" }]],
    [
      '{"mcpServers": []}',
      [{ at: "mcpServers", message: "expected an object of MCP servers, got an array" }],
    ],
  ])("rejects the file %s", (text, expected) => {
    expect(problemsOf(() => parseMcpJson(text, { path }))).toEqual(expected);
  });
});

import { describe, expect, it } from "vitest";
import type { McpServerConfig } from "../src/mcp-server.js";
import { parseToolbusToml } from "../src/toolbus-toml.js";
import { problemsOf } from "./problems-of.js";

const path = "/etc/toolbus/toolbus.toml";
const servers = (toml: string) => parseToolbusToml(toml, { path }).mcpServers;
const problems = (toml: string) => problemsOf(() => parseToolbusToml(toml, { path }));

const stdioDefaults: McpServerConfig = {
  name: "s",
  transport: "stdio",
  command: "srv",
  args: [],
  env: {},
  envVars: [],
  enabled: true,
  required: false,
  startupTimeoutMs: 30_000,
  toolTimeoutMs: 300_000,
  defaultToolsApprovalMode: "auto",
  tools: {},
  supportsParallelToolCalls: false,
  environmentId: "local",
  omitToolsFrom: [],
};

const httpDefaults: McpServerConfig = {
  name: "s",
  transport: "streamable_http",
  url: "https://mcp.example.com/mcp",
  legacySse: false,
  httpHeaders: {},
  envHttpHeaders: {},
  auth: "oauth",
  enabled: true,
  required: false,
  startupTimeoutMs: 30_000,
  toolTimeoutMs: 300_000,
  defaultToolsApprovalMode: "auto",
  tools: {},
  supportsParallelToolCalls: false,
  environmentId: "local",
  omitToolsFrom: [],
};

describe("[2] [mcp_servers.<name>] defaults", () => {
  it("gives a stdio server with only a command every reference default", () => {
    expect(servers('[mcp_servers.s]\ncommand = "srv"')).toEqual({ s: stdioDefaults });
  });

  it("gives an HTTP server with only a url every reference default, auth oauth included", () => {
    expect(servers('[mcp_servers.s]\nurl = "https://mcp.example.com/mcp"')).toEqual({ s: httpDefaults });
  });

  it.each([
    ["startup_timeout_ms = 5000", 5_000, 300_000],
    ["startup_timeout_sec = 2.5", 2_500, 300_000],
    ["startup_timeout_sec = 1\nstartup_timeout_ms = 5000", 1_000, 300_000],
    ["startup_timeout_sec = 45", 45_000, 300_000],
    ["tool_timeout_sec = 0.25", 30_000, 250],
    ["tool_timeout_sec = 600", 30_000, 600_000],
  ])("reads `%s` as startup %i ms and tool %i ms", (keys, startupTimeoutMs, toolTimeoutMs) => {
    expect(servers(`[mcp_servers.s]\ncommand = "srv"\n${keys}`)).toEqual({
      s: { ...stdioDefaults, startupTimeoutMs, toolTimeoutMs },
    });
  });
});

describe("[mcp_servers.<name>] with every key set", () => {
  it("normalizes a stdio server to camelCase with durations in ms", () => {
    const toml = `
[mcp_servers.files]
command = "node"
args = ["server.js", "--root", "/srv"]
env = { LOG = "debug" }
env_vars = ["API_KEY", { name = "REGION", source = "local" }, { name = "REMOTE_ONLY", source = "remote" }, { name = "PLAIN" }]
cwd = "/srv/files"
enabled = false
required = true
startup_timeout_sec = 12.5
tool_timeout_sec = 90
enabled_tools = ["read", "write"]
disabled_tools = ["write"]
default_tools_approval_mode = "writes"
supports_parallel_tool_calls = true
environment_id = "local"
omit_tools_from = ["code_mode", "deferred"]
name = "legacy display name, ignored"

[mcp_servers.files.tools.read]
approval_mode = "approve"

[mcp_servers.files.tools.other]
`;
    expect(servers(toml)).toEqual({
      files: {
        name: "files",
        transport: "stdio",
        command: "node",
        args: ["server.js", "--root", "/srv"],
        env: { LOG: "debug" },
        envVars: [
          { name: "API_KEY", source: "local" },
          { name: "REGION", source: "local" },
          { name: "REMOTE_ONLY", source: "remote" },
          { name: "PLAIN", source: "local" },
        ],
        cwd: "/srv/files",
        enabled: false,
        required: true,
        startupTimeoutMs: 12_500,
        toolTimeoutMs: 90_000,
        enabledTools: ["read", "write"],
        disabledTools: ["write"],
        defaultToolsApprovalMode: "writes",
        tools: { read: { approvalMode: "approve" }, other: {} },
        supportsParallelToolCalls: true,
        environmentId: "local",
        omitToolsFrom: ["code_mode", "deferred"],
      },
    });
  });

  it("normalizes an HTTP server, keeping env-backed values as variable names", () => {
    const toml = `
[mcp_servers.github]
url = "https://api.githubcopilot.com/mcp/"
bearer_token_env_var = "GITHUB_PAT"
http_headers = { "X-Team" = "tools" }
env_http_headers = { "X-Api-Key" = "GITHUB_API_KEY" }
auth = "chatgpt"
transport = "sse"
default_tools_approval_mode = "prompt"
omit_tools_from = ["direct"]
`;
    expect(servers(toml)).toEqual({
      github: {
        ...httpDefaults,
        name: "github",
        url: "https://api.githubcopilot.com/mcp/",
        legacySse: true,
        bearerTokenEnvVar: "GITHUB_PAT",
        httpHeaders: { "X-Team": "tools" },
        envHttpHeaders: { "X-Api-Key": "GITHUB_API_KEY" },
        auth: "chatgpt",
        defaultToolsApprovalMode: "prompt",
        omitToolsFrom: ["direct"],
      },
    });
  });

  it('accepts transport = "streamable_http" as the explicit default', () => {
    expect(
      servers('[mcp_servers.s]\nurl = "https://mcp.example.com/mcp"\ntransport = "streamable_http"'),
    ).toEqual({
      s: httpDefaults,
    });
  });

  it("keeps servers in file order", () => {
    const toml =
      '[mcp_servers.b]\ncommand = "b"\n[mcp_servers.a]\ncommand = "a"\n[mcp_servers.c]\ncommand = "c"';
    expect(Object.keys(servers(toml))).toEqual(["b", "a", "c"]);
  });
});

describe("run_as and sandbox (toolbus extensions for stdio servers)", () => {
  it.each([
    ['run_as = "nobody"', { runAs: "nobody" }],
    ['run_as = "65534:65534"', { runAs: "65534:65534" }],
    ['sandbox = ["bwrap", "--unshare-all", "--"]', { sandbox: ["bwrap", "--unshare-all", "--"] }],
    ["sandbox = []", { sandbox: [] }],
  ])("keeps `%s`", (keys, expected) => {
    expect(servers(`[mcp_servers.s]\ncommand = "srv"\n${keys}`).s).toEqual({ ...stdioDefaults, ...expected });
  });
});

describe("tool lists (the filter lives in the catalog; the lists are kept as written)", () => {
  it.each([
    ['enabled_tools = ["a"]\ndisabled_tools = ["a"]', { enabledTools: ["a"], disabledTools: ["a"] }],
    ["enabled_tools = []", { enabledTools: [] }],
    ['disabled_tools = ["tool.two-three"]', { disabledTools: ["tool.two-three"] }],
    ["", {}],
  ])("reads `%s` with raw tool names untouched", (keys, lists) => {
    expect(servers(`[mcp_servers.s]\ncommand = "srv"\n${keys}`)).toEqual({
      s: { ...stdioDefaults, ...lists },
    });
  });
});

describe("transport selection", () => {
  it.each([
    ["neither command nor url", "enabled = true", "invalid transport"],
    [
      "url together with command",
      'command = "srv"\nurl = "https://x.example"',
      "url is not supported for stdio",
    ],
    ["args on HTTP", 'url = "https://x.example"\nargs = ["a"]', "args is not supported for streamable_http"],
  ])("[1] rejects %s", (_, keys, message) => {
    expect(problems(`[mcp_servers.s]\n${keys}`)).toEqual([{ at: "mcp_servers.s", message }]);
  });

  it.each([
    ["url", '"https://x.example"'],
    ["bearer_token_env_var", '"TOKEN"'],
    ["bearer_token", '"secret"'],
    ["http_headers_helper", '"print-headers"'],
    ["http_headers", '{ A = "b" }'],
    ["env_http_headers", '{ A = "B" }'],
    ["oauth", '{ client_id = "c" }'],
    ["oauth_resource", '"https://x.example"'],
    ["auth", '"oauth"'],
    ["transport", '"sse"'],
  ])("rejects %s on a stdio server", (field, value) => {
    expect(problems(`[mcp_servers.s]\ncommand = "srv"\n${field} = ${value}`)).toEqual([
      { at: "mcp_servers.s", message: `${field} is not supported for stdio` },
    ]);
  });

  it.each([
    ["args", '["a"]'],
    ["env", '{ A = "b" }'],
    ["env_vars", '["A"]'],
    ["cwd", '"/tmp"'],
    ["bearer_token", '"secret"'],
    ["run_as", '"nobody"'],
    ["sandbox", '["bwrap", "--"]'],
  ])("rejects %s on an HTTP server", (field, value) => {
    expect(problems(`[mcp_servers.s]\nurl = "https://x.example"\n${field} = ${value}`)).toEqual([
      { at: "mcp_servers.s", message: `${field} is not supported for streamable_http` },
    ]);
  });

  it.each([
    [
      "http_headers_helper",
      '"print-headers"',
      "http_headers_helper is not supported by toolbus; use http_headers or env_http_headers",
    ],
    [
      "oauth",
      '{ client_id = "c" }',
      "oauth is not supported by toolbus (it has no OAuth login); use bearer_token_env_var or env_http_headers",
    ],
    [
      "oauth_resource",
      '"r"',
      "oauth_resource is not supported by toolbus (it has no OAuth login); use bearer_token_env_var or env_http_headers",
    ],
    [
      "scopes",
      '["read"]',
      "scopes is not supported by toolbus (it has no OAuth login); use bearer_token_env_var or env_http_headers",
    ],
  ])(
    "rejects the Codex OAuth/helper key %s on an HTTP server, since toolbus cannot honour it",
    (field, value, message) => {
      expect(problems(`[mcp_servers.s]\nurl = "https://x.example"\n${field} = ${value}`)).toEqual([
        { at: "mcp_servers.s", message },
      ]);
    },
  );

  it("lists every key of the other transport, not only the first", () => {
    expect(
      problems('[mcp_servers.s]\ncommand = "srv"\nurl = "ftp://bad"\nauth = "oauth"\nbearer_token = 5'),
    ).toEqual([
      { at: "mcp_servers.s", message: "url is not supported for stdio" },
      { at: "mcp_servers.s", message: "bearer_token is not supported for stdio" },
      { at: "mcp_servers.s", message: "auth is not supported for stdio" },
    ]);
  });
});

describe("server names", () => {
  // The reference checks a name when it starts that server: one bad name fails that server
  // alone (the catalog says why), never the whole config.
  it.each(["bad name", "dots.not.allowed", "émoji", "slash/name", ""])(
    "leaves %j to the catalog's start-up, refusing nothing else",
    (name) => {
      expect(
        Object.keys(
          servers(
            `[mcp_servers.${JSON.stringify(name)}]\ncommand = "srv"\n[mcp_servers.ok]\ncommand = "srv"`,
          ),
        ),
      ).toEqual([name, "ok"]);
    },
  );

  it.each(["github", "my-server_2", "A", "___"])("accepts %j", (name) => {
    expect(Object.keys(servers(`[mcp_servers.${JSON.stringify(name)}]\ncommand = "srv"`))).toEqual([name]);
  });
});

describe("field problems, each named by its key path", () => {
  it.each([
    [
      'env_vars = [{ name = "A", source = "cloud" }]',
      "mcp_servers.s.env_vars[0]",
      "unsupported env_vars source `cloud`; expected `local` or `remote`",
    ],
    [
      "env_vars = [5]",
      "mcp_servers.s.env_vars[0]",
      'expected a variable name or a table { name = "...", source = "local" | "remote" }',
    ],
    [
      'env_vars = [{ name = "A", sorce = "local" }]',
      "mcp_servers.s.env_vars[0]",
      "unknown key `sorce` (did you mean `source`?)",
    ],
    ['args = "--verbose"', "mcp_servers.s.args", 'expected an array, got "--verbose"'],
    ["env = { PORT = 8080 }", "mcp_servers.s.env.PORT", "expected a string, got 8080"],
    ["startup_timeout_sec = -1", "mcp_servers.s.startup_timeout_sec", "must be a positive number of seconds"],
    ["startup_timeout_sec = nan", "mcp_servers.s.startup_timeout_sec", "expected a number, got NaN"],
    ['tool_timeout_sec = "60"', "mcp_servers.s.tool_timeout_sec", 'expected a number, got "60"'],
    ["startup_timeout_ms = 1.5", "mcp_servers.s.startup_timeout_ms", "expected an integer, got 1.5"],
    ['enabled = "yes"', "mcp_servers.s.enabled", 'expected true or false, got "yes"'],
    [
      'default_tools_approval_mode = "ask"',
      "mcp_servers.s.default_tools_approval_mode",
      'expected one of `auto`, `prompt`, `writes`, `approve`, `ask_unless_safe`, `always_ask`, `ask_unless_read_only`, `never_ask`, got "ask"',
    ],
    [
      'tools.search.approval_mode = "never"',
      "mcp_servers.s.tools.search.approval_mode",
      'expected one of `auto`, `prompt`, `writes`, `approve`, `ask_unless_safe`, `always_ask`, `ask_unless_read_only`, `never_ask`, got "never"',
    ],
    ['tools.search.mode = "auto"', "mcp_servers.s.tools.search", "unknown key `mode`"],
    [
      'omit_tools_from = ["everywhere"]',
      "mcp_servers.s.omit_tools_from[0]",
      'expected one of `code_mode`, `deferred`, `direct`, got "everywhere"',
    ],
    [
      'environment_id = "devbox"',
      "mcp_servers.s.environment_id",
      'toolbus runs every MCP server locally: remove environment_id or set it to "local"',
    ],
    ["tool_timeout = 60", "mcp_servers.s", "unknown key `tool_timeout` (did you mean `tool_timeout_sec`?)"],
    ["enabeld = false", "mcp_servers.s", "unknown key `enabeld` (did you mean `enabled`?)"],
    ['flavour = "x"', "mcp_servers.s", "unknown key `flavour`"],
    ['command = ""', "mcp_servers.s.command", "must not be empty"],
    [
      'run_as = "no body"',
      "mcp_servers.s.run_as",
      'must be a user name (e.g. "nobody") or numeric "<uid>:<gid>"',
    ],
    [
      'run_as = "1000"',
      "mcp_servers.s.run_as",
      'must be a user name (e.g. "nobody") or numeric "<uid>:<gid>"',
    ],
    ["run_as = 1000", "mcp_servers.s.run_as", "expected a string, got 1000"],
    [
      'sandbox = "bwrap --unshare-all"',
      "mcp_servers.s.sandbox",
      'must list a wrapper command and its arguments, the server\'s command following them, e.g. ["bwrap", "--unshare-all", …, "--"]',
    ],
    ['sandbox = ["bwrap", ""]', "mcp_servers.s.sandbox[1]", "must not be empty"],
  ])("reports `%s` at %s", (keys, at, message) => {
    const command = keys.startsWith("command") ? "" : 'command = "srv"\n';
    expect(problems(`[mcp_servers.s]\n${command}${keys}`)).toEqual([{ at, message }]);
  });

  it("checks an HTTP url's scheme", () => {
    expect(problems('[mcp_servers.s]\nurl = "ftp://files.example"')).toEqual([
      { at: "mcp_servers.s.url", message: "must be an http:// or https:// URL" },
    ]);
  });

  it("rejects a server that is not a table", () => {
    expect(problems("mcp_servers.s = 5")).toEqual([
      { at: "mcp_servers.s", message: "expected a table, got 5" },
    ]);
  });

  it("reports every problem of one server together", () => {
    expect(problems('[mcp_servers."bad name"]\nenabled = "no"\nstartup_timeout = 5')).toEqual([
      { at: 'mcp_servers."bad name"', message: "invalid transport" },
      { at: 'mcp_servers."bad name".enabled', message: 'expected true or false, got "no"' },
      {
        at: 'mcp_servers."bad name"',
        message: "unknown key `startup_timeout` (did you mean `startup_timeout_sec`?)",
      },
    ]);
  });
});

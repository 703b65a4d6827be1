import { describe, expect, it } from "vitest";
import { ConfigFileError } from "../src/problems.js";
import type { ToolbusConfig } from "../src/toolbus-config.js";
import { parseToolbusToml } from "../src/toolbus-toml.js";
import { problemsOf } from "./problems-of.js";

const path = "/etc/toolbus/toolbus.toml";
const parse = (toml: string) => parseToolbusToml(toml, { path });
const problems = (toml: string) => problemsOf(() => parse(toml));

const DAY_MS = 24 * 60 * 60 * 1000;
const GIB = 1024 * 1024 * 1024;

const defaults: ToolbusConfig = {
  source: { kind: "file", path, format: "toml" },
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
  bus: {
    events: { maxAgeMs: 7 * DAY_MS, maxBytes: GIB },
    memory: { maxAgeMs: 7 * DAY_MS, maxBytes: GIB },
    largeReplies: { maxAgeMs: 600_000, maxBytes: GIB },
    largeRepliesInFlightBytes: 32 * 1024 * 1024,
    maxReplyBytes: 16 * 1024 * 1024,
  },
  views: {},
};

describe("[catalog] keys for stdio servers", () => {
  it("reads servers_dir (relative to the file), run_as and sandbox", () => {
    const { catalog } = parse(
      '[catalog]\nservers_dir = "servers"\nrun_as = "nobody"\nsandbox = ["bwrap", "--unshare-all", "--"]',
    );
    expect(catalog).toEqual({
      nameLimit: 64,
      prefixMcp: true,
      serversDir: "/etc/toolbus/servers",
      runAs: "nobody",
      sandbox: ["bwrap", "--unshare-all", "--"],
    });
  });

  it("keeps an absolute servers_dir as written", () => {
    expect(parse('[catalog]\nservers_dir = "/var/lib/toolbus/servers"').catalog.serversDir).toBe(
      "/var/lib/toolbus/servers",
    );
  });

  it.each([
    [
      'run_as = "root user"',
      "catalog.run_as",
      'must be a user name (e.g. "nobody") or numeric "<uid>:<gid>"',
    ],
    ['servers_dir = ""', "catalog.servers_dir", "must not be empty"],
    ["sandbox = [1]", "catalog.sandbox[0]", "expected a string, got 1"],
  ])("reports `%s` at %s", (keys, at, message) => {
    expect(problems(`[catalog]\n${keys}`)).toEqual([{ at, message }]);
  });
});

describe("toolbus.toml tables", () => {
  it("gives an empty file every default", () => {
    expect(parse("")).toEqual(defaults);
  });

  it("reads every table key, camelCased, with seconds as ms", () => {
    const toml = `
[gateway]
port = 9090
host = "0.0.0.0"
naming = "conditional"
tokens_env = "TOOLBUS_TOKENS"
allowed_hosts = ["toolbus.internal"]
allow_unauthenticated = true
elicit_approvals = false
resource_tools = false
max_sessions_per_client = 5
max_batch_size = 6
max_streams = 7
max_streams_per_client = 8
task_after_sec = 0.5

[catalog]
name_limit = 128
prefix_mcp = true
non_prefixed_servers = ["docs"]

[approvals]
timeout_sec = 120
hooks = "hooks.json"
port = 9091
max_concurrent_hooks = 4
self_approve = true

[memory]
batch_size = 10
max_deliveries = 3
redelivery_delay_sec = 0.5
ack_wait_sec = 90

[bus]
events_max_age_sec = 86400
events_max_bytes = 10485760
memory_max_age_sec = 3600
memory_max_bytes = 2097152
large_reply_ttl_sec = 60
large_replies_max_bytes = 4194304
large_replies_in_flight_bytes = 8388608
max_reply_bytes = 2097152

[mcp_servers.docs]
command = "docs-server"
`;
    expect(parse(toml)).toEqual({
      ...defaults,
      mcpServers: {
        docs: {
          name: "docs",
          transport: "stdio",
          command: "docs-server",
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
        },
      },
      gateway: {
        port: 9090,
        host: "0.0.0.0",
        naming: "conditional",
        tokensEnv: "TOOLBUS_TOKENS",
        allowedHosts: ["toolbus.internal"],
        allowUnauthenticated: true,
        elicitApprovals: false,
        resourceTools: false,
        maxSessionsPerClient: 5,
        maxBatchSize: 6,
        maxStreams: 7,
        maxStreamsPerClient: 8,
        taskAfterMs: 500,
      },
      catalog: { nameLimit: 128, prefixMcp: true, nonPrefixedServers: ["docs"] },
      approvals: {
        timeoutMs: 120_000,
        hooksPath: "/etc/toolbus/hooks.json",
        port: 9091,
        maxConcurrentHooks: 4,
        selfApprove: true,
      },
      memory: { batchSize: 10, maxDeliveries: 3, redeliveryDelayMs: 500, ackWaitMs: 90_000 },
      bus: {
        events: { maxAgeMs: DAY_MS, maxBytes: 10 * 1024 * 1024 },
        memory: { maxAgeMs: 3_600_000, maxBytes: 2 * 1024 * 1024 },
        largeReplies: { maxAgeMs: 60_000, maxBytes: 4 * 1024 * 1024 },
        largeRepliesInFlightBytes: 8 * 1024 * 1024,
        maxReplyBytes: 2 * 1024 * 1024,
      },
    });
  });

  it("keeps an absolute hooks path as written", () => {
    expect(parse('[approvals]\nhooks = "/opt/hooks.json"').approvals).toEqual({
      timeoutMs: 600_000,
      hooksPath: "/opt/hooks.json",
      port: 8081,
      maxConcurrentHooks: 16,
      selfApprove: false,
    });
  });

  it("lets prefix_mcp = false stand without a list (then no server is prefixed)", () => {
    expect(parse("[catalog]\nprefix_mcp = false").catalog).toEqual({ nameLimit: 64, prefixMcp: false });
  });

  it.each([
    ["[catalog]\nname_limit = 19", "catalog.name_limit", "must be at least 20 (bytes)"],
    ["[catalog]\nname_limit = 64.5", "catalog.name_limit", "expected an integer, got 64.5"],
    ["[gateway]\nport = 70000", "gateway.port", "must be a port from 0 to 65535"],
    ['[gateway]\nnaming = "flat"', "gateway.naming", 'expected one of `prefixed`, `conditional`, got "flat"'],
    ['[gateway]\nallowed_hosts = "localhost"', "gateway.allowed_hosts", 'expected an array, got "localhost"'],
    ['[gateway]\nresource_tools = "off"', "gateway.resource_tools", 'expected true or false, got "off"'],
    [
      "[gateway]\nresource_tool = false",
      "gateway",
      "unknown key `resource_tool` (did you mean `resource_tools`?)",
    ],
    ["[approvals]\ntimeout_sec = 0", "approvals.timeout_sec", "must be a positive number of seconds"],
    [
      "[approvals]\nmax_concurrent_hooks = 0",
      "approvals.max_concurrent_hooks",
      "must be a whole number from 1 to 1024",
    ],
    ["[approvals]\nhook = 'h.json'", "approvals", "unknown key `hook` (did you mean `hooks`?)"],
    ["[memory]\nbatch_size = 0", "memory.batch_size", "must be from 1 to 10000"],
    ["[memory]\nack_wait_sec = 0.5", "memory.ack_wait_sec", "must be from 1 to 600 seconds"],
    ["[memory]\nbatch_wait_sec = 1", "memory", "unknown key `batch_wait_sec` (did you mean `ack_wait_sec`?)"],
    ["[bus]\nevents_max_age_sec = 60", "bus.events_max_age_sec", "must be at least 600 seconds"],
    ["[bus]\nmemory_max_bytes = 1000", "bus.memory_max_bytes", "must be at least 1048576 bytes (1 MiB)"],
    ["[bus]\nlarge_reply_ttl_sec = 1", "bus.large_reply_ttl_sec", "must be at least 10 seconds"],
    [
      "[bus]\nlarge_replies_in_flight_bytes = 8388608",
      "bus.large_replies_in_flight_bytes",
      "must be at least max_reply_bytes (16777216): a result as large as toolbus reads must fit in it",
    ],
    ["[gatway]\nport = 1", "", "unknown key `gatway` (did you mean `gateway`?)"],
    ["[mcp_server.x]\ncommand = 'x'", "", "unknown key `mcp_server` (did you mean `mcp_servers`?)"],
    ["gateway = 5", "gateway", "expected a table, got 5"],
    ["mcp_servers = []", "mcp_servers", "expected a table, got an array"],
    [
      "[catalog]\nprefix_mcp = false\nnon_prefixed_servers = []",
      "catalog.non_prefixed_servers",
      "has no effect with prefix_mcp = false (no server is prefixed); remove it or set prefix_mcp = true",
    ],
    [
      '[catalog]\nnon_prefixed_servers = ["ghost"]',
      "catalog.non_prefixed_servers",
      "names `ghost`, which is not a server in [mcp_servers]",
    ],
  ])("reports `%s` at %j", (toml, at, message) => {
    expect(problems(toml)).toEqual([{ at, message }]);
  });

  it("reports a TOML syntax error with its position", () => {
    expect(problems("[gateway]\nport = ")).toEqual([
      { at: "", message: "invalid TOML at line 2, column 8: invalid value" },
    ]);
  });

  it("returns a frozen config, so no service can change it at run time", () => {
    const config = parse('[mcp_servers.s]\ncommand = "srv"\nargs = ["a"]');
    expect(() => {
      (config.gateway as { port: number }).port = 1;
    }).toThrow(TypeError);
    expect(() => {
      (config.mcpServers.s as { args: string[] }).args.push("b");
    }).toThrow(TypeError);
  });
});

describe("every problem is listed at once", () => {
  const toml = `
[mcp_servers.ok]
command = "fine"

[mcp_servers.no_transport]
required = true

[mcp_servers.both]
command = "srv"
url = "https://x.example"

[mcp_servers.bad]
command = 5

[gateway]
port = -1
`;

  it("reports one problem per bad server and bad field, in file order", () => {
    expect(problems(toml)).toEqual([
      { at: "mcp_servers.no_transport", message: "invalid transport" },
      { at: "mcp_servers.both", message: "url is not supported for stdio" },
      { at: "mcp_servers.bad.command", message: "expected a string, got 5" },
      { at: "gateway.port", message: "must be a port from 0 to 65535" },
    ]);
  });

  it("puts the file path on every line of the error message", () => {
    let thrown: unknown;
    try {
      parse(toml);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigFileError);
    expect((thrown as ConfigFileError).path).toBe(path);
    expect((thrown as ConfigFileError).message).toBe(
      [
        "Invalid toolbus config (4 problems):",
        "  /etc/toolbus/toolbus.toml: mcp_servers.no_transport: invalid transport",
        "  /etc/toolbus/toolbus.toml: mcp_servers.both: url is not supported for stdio",
        "  /etc/toolbus/toolbus.toml: mcp_servers.bad.command: expected a string, got 5",
        "  /etc/toolbus/toolbus.toml: gateway.port: must be a port from 0 to 65535",
      ].join("\n"),
    );
  });
});

describe("[views.<name>]", () => {
  it("reads each view with its servers, tools and groups; defaults take everything, for everyone", () => {
    const { views } = parse(
      '[mcp_servers.github]\ncommand = "gh"\n\n[views.readonly]\nservers = ["github"]\ntools = ["get_*", "list_*"]\ngroups = ["eng"]\n\n[views.all]\n',
    );
    expect(views).toEqual({
      readonly: { name: "readonly", servers: ["github"], tools: ["get_*", "list_*"], groups: ["eng"] },
      all: { name: "all", servers: ["*"], tools: ["*"], groups: [] },
    });
  });

  it("refuses a view name that is no URL segment, and a plain server name that is not configured", () => {
    expect(() => parse('[views."a/b"]\n')).toThrow(/URL path segment/);
    expect(() => parse('[mcp_servers.github]\ncommand = "gh"\n\n[views.x]\nservers = ["gihtub"]\n')).toThrow(
      /views\.x\.servers\.0.*names no configured server \("gihtub"\); the servers are github/,
    );
  });

  it("reads the scopes a tool requires", () => {
    const { mcpServers } = parse(
      '[mcp_servers.github]\ncommand = "gh"\n\n[mcp_servers.github.tools.delete_repo]\nscopes = ["repo:admin"]\n',
    );
    expect(mcpServers.github?.tools).toEqual({ delete_repo: { scopes: ["repo:admin"] } });
    expect(() =>
      parse('[mcp_servers.github]\ncommand = "gh"\n\n[mcp_servers.github.tools.x]\nscopes = ["a b"]\n'),
    ).toThrow(/must be an OAuth scope/);
  });
});

describe("isolation of a stdio server", () => {
  const server = (keys: string) => `[mcp_servers.s]\ncommand = "srv"\n${keys}`;

  it("reads per_principal and per_session with their bounds, and defaults the bounds", () => {
    const isolationOf = (toml: string) => {
      const s = parse(toml).mcpServers.s;
      return s?.transport === "stdio" ? s.isolation : "not stdio";
    };
    expect([
      isolationOf(server('isolation = "per_principal"\nmax_instances = 3\ninstance_idle_timeout_sec = 60')),
      isolationOf(server('isolation = "per_session"')),
      isolationOf(server('isolation = "shared"')),
      isolationOf(server("")),
    ]).toEqual([
      { by: "principal", maxInstances: 3, idleTimeoutMs: 60_000 },
      { by: "session", maxInstances: 8, idleTimeoutMs: 300_000 },
      undefined,
      undefined,
    ]);
  });

  it.each([
    [
      'isolation = "per_user"',
      "mcp_servers.s.isolation",
      'must be "shared", "per_principal" or "per_session"',
    ],
    ["max_instances = 0", "mcp_servers.s.max_instances", "Too small: expected number to be >=1"],
    [
      "instance_idle_timeout_sec = 0",
      "mcp_servers.s.instance_idle_timeout_sec",
      "must be a positive number of seconds",
    ],
  ])("reports `%s` at %s", (keys, at, message) => {
    expect(problems(server(keys))).toEqual([{ at, message }]);
  });

  it("is for stdio servers only: an HTTP server is one process toolbus does not start", () => {
    expect(problems('[mcp_servers.s]\nurl = "https://example.com/mcp"\nisolation = "per_principal"')).toEqual(
      [{ at: "mcp_servers.s", message: "isolation is not supported for streamable_http" }],
    );
  });
});

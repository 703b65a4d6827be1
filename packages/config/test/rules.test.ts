import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { normalizeCatalog } from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import { demoConfig } from "../src/demo.js";
import { bareTokenName, resolveGatewayTokens } from "../src/gateway-tokens.js";
import { DEFAULT_BUS_CONFIG } from "../src/tables.js";
import { parseToolbusToml } from "../src/toolbus-toml.js";

describe("[catalog] feeds the protocol's naming rules as it is", () => {
  const toml = `
[mcp_servers.docs]
command = "docs"
[mcp_servers.srv]
command = "srv"
[catalog]
non_prefixed_servers = ["docs"]
`;

  it("prefixes every server but the ones listed", () => {
    const { catalog } = parseToolbusToml(toml, { path: "/x/toolbus.toml" });
    const { tools } = normalizeCatalog(
      [
        { server: "docs", tool: { name: "search" } },
        { server: "srv", tool: { name: "search" } },
      ],
      catalog,
    );
    expect(tools.map((t) => t.flatName)).toEqual(["docs__search", "mcp__srv__search"]);
  });
});

describe("gateway bearer tokens", () => {
  it.each([
    [{}, {}, { ok: true, principals: [] }],
    [
      { tokensEnv: "TOKENS" },
      { TOKENS: "alice:approver:a-secret, ci.bot:caller:c:with:colons\nbare-token" },
      {
        ok: true,
        principals: [
          { name: "alice", role: "approver", token: "a-secret" },
          { name: "ci.bot", role: "caller", token: "c:with:colons" },
          { name: bareTokenName("bare-token"), role: "admin", token: "bare-token" },
        ],
      },
    ],
    [
      { tokensEnv: "TOKENS" },
      {},
      {
        ok: false,
        message:
          "Environment variable TOKENS (gateway.tokens_env) is not set; set it to the accepted bearer tokens (or TOKENS_FILE to a file holding them), or remove tokens_env to turn auth off",
      },
    ],
    [
      { tokensEnv: "TOKENS" },
      { TOKENS: " , " },
      {
        ok: false,
        message:
          "Environment variable TOKENS (gateway.tokens_env) holds no tokens; set it to the accepted bearer tokens (or TOKENS_FILE to a file holding them), or remove tokens_env to turn auth off",
      },
    ],
    [
      { tokensEnv: "TOKENS" },
      {
        TOKENS: "half:secret1 bob:boss:secret2 carol:caller: user:admin:secret3 x:caller:dup y:approver:dup",
      },
      {
        ok: false,
        message: [
          'entry 1 of TOKENS (gateway.tokens_env): has one ":"; write <name>:<role>:<token> (role caller, approver, admin) or a bare token without ":"',
          "entry 2 of TOKENS (gateway.tokens_env): the role of bob must be one of caller, approver, admin",
          'entry 3 of TOKENS (gateway.tokens_env): carol has no token after "carol:caller:"',
          "entry 4 of TOKENS (gateway.tokens_env): the name user is reserved (an approval answered by user, timeout, cancel, anonymous means no principal); choose another",
          "entry 6 of TOKENS (gateway.tokens_env): the same token is listed twice; give each principal its own token",
        ].join("; "),
      },
    ],
  ])("%j with env %j", (gateway, env, expected) => {
    expect(resolveGatewayTokens(gateway, env)).toEqual(expected);
  });

  describe("from the file TOKENS_FILE names", () => {
    const dir = mkdtempSync(join(tmpdir(), "toolbus-tokens-"));
    const file = join(dir, "tokens");
    writeFileSync(file, "alice:approver:a-secret\nci:caller:c-secret\n", { mode: 0o600 });

    it("accepts the tokens in the file, as if the variable held them", () => {
      expect(resolveGatewayTokens({ tokensEnv: "TOKENS" }, { TOKENS_FILE: file })).toEqual({
        ok: true,
        principals: [
          { name: "alice", role: "approver", token: "a-secret" },
          { name: "ci", role: "caller", token: "c-secret" },
        ],
      });
    });

    it("names the file, not a token, when an entry is wrong", () => {
      const bad = join(dir, "bad");
      writeFileSync(bad, "alice:boss:a-secret\n");
      expect(resolveGatewayTokens({ tokensEnv: "TOKENS" }, { TOKENS_FILE: bad })).toEqual({
        ok: false,
        message:
          "entry 1 of TOKENS_FILE (gateway.tokens_env): the role of alice must be one of caller, approver, admin",
      });
    });

    it.each([
      [
        "a missing file",
        () => ({ TOKENS_FILE: join(dir, "missing") }),
        `TOKENS_FILE=${join(dir, "missing")}: cannot read it (no such file); point it at a file holding TOKENS's value (gateway.tokens_env)`,
      ],
      [
        "an empty file",
        () => {
          writeFileSync(join(dir, "empty"), "\n");
          return { TOKENS_FILE: join(dir, "empty") };
        },
        `The file TOKENS_FILE=${join(dir, "empty")} (gateway.tokens_env) holds no tokens; set it to the accepted bearer tokens (or TOKENS_FILE to a file holding them), or remove tokens_env to turn auth off`,
      ],
      [
        "the variable set as well",
        () => ({ TOKENS: "alice:admin:x", TOKENS_FILE: file }),
        "TOKENS and TOKENS_FILE are both set; keep one (TOKENS_FILE, the file, keeps the secret out of the environment) (gateway.tokens_env)",
      ],
    ])("refuses %s, saying what to do", (_, env, message) => {
      expect(resolveGatewayTokens({ tokensEnv: "TOKENS" }, env())).toEqual({ ok: false, message });
    });
  });

  it("names a bare token by a hash prefix that stays the same and does not show the token", () => {
    expect([bareTokenName("s3cret"), bareTokenName("s3cret") === bareTokenName("other")]).toEqual([
      "token-1ec1c26b",
      false,
    ]);
  });
});

describe("the built-in demo config", () => {
  it("runs the given server-everything command over stdio, with every default", () => {
    expect(
      demoConfig({ command: "/usr/bin/node", args: ["/deps/server-everything/dist/index.js", "stdio"] }),
    ).toEqual({
      source: { kind: "demo" },
      mcpServers: {
        everything: {
          name: "everything",
          transport: "stdio",
          command: "/usr/bin/node",
          args: ["/deps/server-everything/dist/index.js", "stdio"],
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
});

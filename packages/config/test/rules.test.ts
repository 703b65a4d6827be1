import { normalizeCatalog } from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import { demoConfig } from "../src/demo.js";
import { resolveGatewayTokens } from "../src/gateway-tokens.js";
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
    [{}, {}, { ok: true, tokens: [] }],
    [{ tokensEnv: "TOKENS" }, { TOKENS: "a, b\nc" }, { ok: true, tokens: ["a", "b", "c"] }],
    [
      { tokensEnv: "TOKENS" },
      {},
      {
        ok: false,
        message:
          "Environment variable TOKENS (gateway.tokens_env) is not set; set it to the accepted bearer tokens, or remove tokens_env to turn auth off",
      },
    ],
    [
      { tokensEnv: "TOKENS" },
      { TOKENS: " , " },
      {
        ok: false,
        message:
          "Environment variable TOKENS (gateway.tokens_env) holds no tokens; set it to the accepted bearer tokens, or remove tokens_env to turn auth off",
      },
    ],
  ])("%j with env %j", (gateway, env, expected) => {
    expect(resolveGatewayTokens(gateway, env)).toEqual(expected);
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
      },
      catalog: { nameLimit: 64, prefixMcp: true },
      approvals: { timeoutMs: 600_000, port: 8081 },
      memory: { batchSize: 500, maxDeliveries: 5, redeliveryDelayMs: 1_000, ackWaitMs: 30_000 },
      bus: DEFAULT_BUS_CONFIG,
    });
  });
});

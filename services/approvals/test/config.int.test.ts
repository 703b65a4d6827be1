/** Loading the service's configuration from the environment, the command line and real files. */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, LOG_LEVELS } from "@toolbus/bus";
import { describe, expect, it } from "vitest";
import { loadApprovalsConfig } from "../src/config.js";

async function files(entries: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "toolbus-approvals-config-"));
  for (const [name, text] of Object.entries(entries)) await writeFile(join(dir, name), text);
  return dir;
}

const HOOKS = {
  hooks: {
    PreToolUse: [
      { matcher: "mcp__docs__.*", hooks: [{ type: "command", command: "./guard.sh", timeout: 5 }] },
    ],
  },
};

describe("loadApprovalsConfig", () => {
  it("reads modes, [approvals] and the hooks file from toolbus.toml, and the rest from the environment", async () => {
    const dir = await files({
      "toolbus.toml": [
        "[mcp_servers.docs]",
        'command = "docs-server"',
        'default_tools_approval_mode = "writes"',
        "[mcp_servers.docs.tools.search]",
        'approval_mode = "approve"',
        "[approvals]",
        "timeout_sec = 90",
        'hooks = "hooks.json"',
        "port = 9191",
        "max_concurrent_hooks = 3",
        "self_approve = true",
        "[gateway]",
        'tokens_env = "TOOLBUS_TOKENS"',
        'allowed_hosts = ["approvals.internal"]',
        "max_streams_per_client = 3",
      ].join("\n"),
      "hooks.json": JSON.stringify(HOOKS),
    });
    const config = await loadApprovalsConfig({
      env: {
        DATABASE_URL: "postgres://db/toolbus",
        TOOLBUS_PREFIX: "tenant_a",
        TOOLBUS_APPROVAL_POLICY: "never",
        TOOLBUS_PERMISSION_PROFILE: "full-access",
        TOOLBUS_TOKENS: "alice:approver:a-secret",
      },
      argv: ["--host", "0.0.0.0"],
      cwd: dir,
    });
    expect(config).toEqual({
      natsUrl: "nats://127.0.0.1:4222",
      databaseUrl: "postgres://db/toolbus",
      prefix: "tenant_a",
      logLevel: "info",
      policy: "never",
      permissionProfile: "full-access",
      timeoutMs: 90_000,
      maxConcurrentHooks: 3,
      selfApprove: true,
      hooks: { PreToolUse: HOOKS.hooks.PreToolUse, PermissionRequest: [], PostToolUse: [] },
      servers: {
        docs: { defaultToolsApprovalMode: "writes", tools: { search: { approvalMode: "approve" } } },
      },
      // The inbox is guarded with the gateway's settings and tokens.
      http: {
        host: "0.0.0.0",
        port: 9191,
        allowedHosts: ["approvals.internal"],
        principals: [{ name: "alice", role: "approver", token: "a-secret" }],
        allowUnauthenticated: false,
        maxStreams: 2000,
        maxStreamsPerClient: 3,
      },
      pollIntervalMs: 5_000,
      sweepIntervalMs: 5_000,
      shutdownGraceMs: 10_000,
      poolSize: 10,
    });
    expect(Object.isFrozen(config.servers)).toBe(true);
  });

  it("uses the defaults, and the demo config's one server, when there is no config file", async () => {
    const config = await loadApprovalsConfig({
      env: { DATABASE_URL: "postgres://db/x" },
      cwd: await files({}),
    });
    expect({
      servers: config.servers,
      timeoutMs: config.timeoutMs,
      maxConcurrentHooks: config.maxConcurrentHooks,
      http: config.http,
      policy: config.policy,
    }).toEqual({
      servers: { everything: { defaultToolsApprovalMode: "auto", tools: {} } },
      timeoutMs: 600_000,
      maxConcurrentHooks: 16,
      http: {
        host: "127.0.0.1",
        port: 8081,
        allowedHosts: ["localhost", "127.0.0.1", "[::1]"],
        principals: [],
        allowUnauthenticated: false,
        maxStreams: 2000,
        maxStreamsPerClient: 200,
      },
      policy: "on-request",
    });
  });

  it("reads the database URL and the gateway tokens from the files DATABASE_URL_FILE and <tokens_env>_FILE name", async () => {
    const dir = await files({
      "toolbus.toml": '[gateway]\ntokens_env = "TOOLBUS_TOKENS"\n',
      "database-url": "postgres://db/from-file\n",
      tokens: "alice:approver:a-secret\n",
    });
    const config = await loadApprovalsConfig({
      env: { DATABASE_URL_FILE: join(dir, "database-url"), TOOLBUS_TOKENS_FILE: join(dir, "tokens") },
      cwd: dir,
    });
    expect(config).toMatchObject({
      databaseUrl: "postgres://db/from-file",
      http: { principals: [{ name: "alice", role: "approver", token: "a-secret" }] },
    });
  });

  it("names DATABASE_URL_FILE and its path when the file cannot be read", async () => {
    const dir = await files({});
    const failure = await loadApprovalsConfig({
      env: { DATABASE_URL_FILE: join(dir, "missing") },
      cwd: dir,
    }).catch((error: unknown) => error);
    expect((failure as ConfigError).problems).toContain(
      `DATABASE_URL_FILE=${join(dir, "missing")}: cannot read it (no such file); point it at a file holding DATABASE_URL's value`,
    );
  });

  it("reports every problem at once: environment, command line, config file and hooks file", async () => {
    const dir = await files({
      "toolbus.toml": '[approvals]\nhooks = "hooks.json"\n[gateway]\ntokens_env = "INBOX_TOKENS"\n',
      "hooks.json": JSON.stringify({ PreToolUse: [{ matcher: "mcp__(", hooks: [{ type: "prompt" }] }] }),
    });
    const failure = await loadApprovalsConfig({
      env: {
        TOOLBUS_PREFIX: "bad.prefix",
        LOG_LEVEL: "loud",
        TOOLBUS_APPROVAL_POLICY: "sometimes",
        TOOLBUS_PERMISSION_PROFILE: "yolo",
      },
      argv: ["--port", "http"],
      cwd: dir,
    }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ConfigError);
    expect((failure as ConfigError).problems).toEqual([
      "Environment variable INBOX_TOKENS (gateway.tokens_env) is not set; set it to the accepted bearer tokens (or INBOX_TOKENS_FILE to a file holding them), or remove tokens_env to turn auth off",
      `${join(dir, "hooks.json")}: PreToolUse.0.matcher: invalid matcher "mcp__(": ${regexError("mcp__(")}; PreToolUse.0.hooks.0.type: hook type "prompt" is not supported; use "command" or "http" (toolbus runs no prompt, agent or mcp_tool hooks)`,
      '--port: must be a port from 0 to 65535, got "http"',
      "DATABASE_URL: missing; set it (expected string)",
      expect.stringMatching(/^TOOLBUS_PREFIX: Invalid toolbus subject prefix "bad\.prefix"/),
      `LOG_LEVEL: must be one of ${LOG_LEVELS.join(", ")}`,
      'TOOLBUS_APPROVAL_POLICY: Invalid option: expected one of "on-request"|"never"',
      'TOOLBUS_PERMISSION_PROFILE: Invalid option: expected one of "restricted"|"full-access"',
    ]);
  });
});

function regexError(pattern: string): string {
  try {
    new RegExp(pattern);
    return "";
  } catch (error) {
    return (error as Error).message;
  }
}

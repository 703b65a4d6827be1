// Start-up against real server processes: status events, the summary, display errors,
// required servers, disabled servers, defaults and filters from the config, and the stdio
// child's environment (docs/reference-behavior.md §1–2, checklist 2–7, 10–12).
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serverEverythingCommand, startTestServer } from "@toolbus/testkit/mcp-test-server";
import { afterEach, describe, expect, it } from "vitest";
import { CatalogHarness, eventually, toolbusToml } from "./support/harness.js";

const NODE = process.execPath;
const MISSING_COMMAND = "/nonexistent/toolbus-test-command";

let harness: CatalogHarness;
afterEach(async () => {
  await harness?.close();
});

/** The states a server went through, from its status events. */
function states(server: string): string[] {
  return harness
    .eventsOn(harness.subjects.serverStatus(server))
    .map((e) => (e.status as { state: string }).state);
}

async function summaryEvent() {
  return eventually("the startup summary", () => harness.eventsOn(harness.subjects.startupComplete)[0]);
}

describe("catalog start-up", () => {
  it("[5] never spawns a disabled server, publishes nothing about it, and lists it as disabled", async () => {
    harness = await CatalogHarness.create("startup");
    const dir = await mkdtemp(join(tmpdir(), "toolbus-disabled-"));
    harness.defer(() => rm(dir, { recursive: true, force: true }));
    const marker = join(dir, "spawned");
    const on = await startTestServer({ transport: "stdio", script: { tools: [{ name: "echo" }] } });
    harness.defer(() => on.dispose());
    const { service } = await harness.start(
      toolbusToml({
        servers: {
          off: {
            command: NODE,
            args: ["-e", "require('fs').writeFileSync(process.argv[1], 'spawned')", marker],
            enabled: false,
          },
          on: { command: on.command, args: on.args },
        },
      }),
    );

    expect(await service.startup).toEqual({ ready: ["on"], failed: [], cancelled: [] });
    expect(await summaryEvent()).toEqual({ ready: ["on"], failed: [], cancelled: [] });
    expect(existsSync(marker)).toBe(false);
    expect(harness.eventsOn(harness.subjects.serverStatus("off"))).toEqual([]);
    const catalog = await harness.catalog();
    expect(catalog.servers).toEqual([
      { name: "off", status: "disabled", required: false, revision: expect.any(Number) },
      {
        name: "on",
        status: "ready",
        required: false,
        revision: expect.any(Number),
        serverInfo: { name: "toolbus-mcp-test-server", version: "0.1.0" },
      },
    ]);
    expect(catalog.tools.map((tool) => tool.server)).toEqual(["on"]);
  });

  it("[6][7] reports each server starting, then ready or failed, then one summary carrying the raw errors", async () => {
    harness = await CatalogHarness.create("startup");
    const good = await startTestServer({ transport: "stdio", script: { tools: [{ name: "echo" }] } });
    harness.defer(() => good.dispose());
    const { service } = await harness.start(
      toolbusToml({
        servers: {
          good: { command: good.command, args: good.args },
          missing: { command: MISSING_COMMAND },
          quits: { command: NODE, args: ["-e", "process.exit(3)"] },
          // Never answers initialize.
          mute: { command: NODE, args: ["-e", "setInterval(() => {}, 1000)"], startup_timeout_sec: 0.5 },
        },
      }),
    );

    const summary = {
      ready: ["good"],
      failed: [
        { server: "missing", error: `spawn ${MISSING_COMMAND} ENOENT` },
        { server: "mute", error: "MCP client startup timed out after 500ms" },
        { server: "quits", error: "MCP error -32000: Connection closed" },
      ],
      cancelled: [],
    };
    expect(await service.startup).toEqual(summary);
    expect(await summaryEvent()).toEqual(summary);
    await eventually("every status event", () =>
      ["good", "missing", "mute", "quits"].every((server) => states(server).length === 2) ? true : undefined,
    );

    const display = {
      missing: `MCP client for \`missing\` failed to start: spawn ${MISSING_COMMAND} ENOENT`,
      mute:
        "MCP client for `mute` timed out after 0.5 seconds. Add or adjust `startup_timeout_sec` in your config.toml:\n" +
        "[mcp_servers.mute]\nstartup_timeout_sec = XX",
      quits: "MCP client for `quits` failed to start: MCP error -32000: Connection closed",
    };
    expect(
      Object.fromEntries(
        ["good", "missing", "mute", "quits"].map((server) => [
          server,
          harness.eventsOn(harness.subjects.serverStatus(server)).map((e) => e.status),
        ]),
      ),
    ).toEqual({
      good: [{ state: "starting" }, { state: "ready" }],
      missing: [{ state: "starting" }, { state: "failed", error: display.missing }],
      mute: [{ state: "starting" }, { state: "failed", error: display.mute }],
      quits: [{ state: "starting" }, { state: "failed", error: display.quits }],
    });
    // The summary comes once, after every server settled.
    const subjects = harness.events.map((e) => e.subject);
    expect(subjects.filter((s) => s === harness.subjects.startupComplete)).toHaveLength(1);
    const statusSubjects = subjects.filter((s) => s.startsWith(`${harness.prefix}.events.server.`));
    expect(subjects.indexOf(harness.subjects.startupComplete)).toBeGreaterThan(
      subjects.lastIndexOf(statusSubjects.at(-1)!),
    );
    expect((await harness.catalog()).servers).toEqual([
      {
        name: "good",
        status: "ready",
        required: false,
        revision: expect.any(Number),
        serverInfo: { name: "toolbus-mcp-test-server", version: "0.1.0" },
      },
      {
        name: "missing",
        status: "failed",
        error: display.missing,
        required: false,
        revision: expect.any(Number),
      },
      { name: "mute", status: "failed", error: display.mute, required: false, revision: expect.any(Number) },
      {
        name: "quits",
        status: "failed",
        error: display.quits,
        required: false,
        revision: expect.any(Number),
      },
    ]);
  });

  it("[3] fails only a server whose name is invalid, with the reference's message, and starts the rest", async () => {
    harness = await CatalogHarness.create("startup");
    const good = await startTestServer({ transport: "stdio", script: { tools: [{ name: "echo" }] } });
    harness.defer(() => good.dispose());
    const { service } = await harness.start(
      toolbusToml({
        servers: {
          good: { command: good.command, args: good.args },
          "bad name": { command: good.command, args: good.args, required: true },
        },
      }),
    );

    const error = "Invalid MCP server name 'bad name': must match pattern ^[a-zA-Z0-9_-]+$";
    const summary = { ready: ["good"], failed: [{ server: "bad name", error }], cancelled: [] };
    expect(await service.startup).toEqual(summary);
    expect(await summaryEvent()).toEqual(summary);
    expect(await service.requiredFailure()).toBe(
      `required MCP servers failed to initialize: bad name: ${error}`,
    );
    expect((await harness.catalog()).tools.map((tool) => tool.server)).toEqual(["good"]);
  });

  it("says why a server that quits at once failed, in its own words from stderr (an npx that cannot fetch it)", async () => {
    harness = await CatalogHarness.create("startup");
    const npm404 = [
      "console.error('npm error code E404');",
      "console.error('npm error 404 Not Found - GET https://registry.npmjs.org/no-such-mcp-server');",
      "console.error('npm error A complete log of this run can be found in: /tmp/npm.log');",
      "process.exit(1);",
    ].join(" ");
    const { service } = await harness.start(
      toolbusToml({ servers: { fetched: { command: NODE, args: ["-e", npm404] } } }),
    );
    expect(await service.startup).toEqual({
      ready: [],
      failed: [
        {
          server: "fetched",
          error:
            "MCP error -32000: Connection closed (the server's stderr: npm error 404 Not Found - GET https://registry.npmjs.org/no-such-mcp-server)",
        },
      ],
      cancelled: [],
    });
  });

  it("[10] names every required server that failed, in sorted order, and ignores optional ones", async () => {
    harness = await CatalogHarness.create("startup");
    const ok = await startTestServer({ transport: "stdio", script: { tools: [{ name: "echo" }] } });
    harness.defer(() => ok.dispose());
    const { service } = await harness.start(
      toolbusToml({
        servers: {
          zeta: { command: MISSING_COMMAND, required: true },
          ok: { command: ok.command, args: ok.args, required: true },
          alpha: { command: NODE, args: ["-e", "process.exit(3)"], required: true },
          optional: { command: MISSING_COMMAND },
        },
      }),
    );

    expect(await service.requiredFailure()).toBe(
      "required MCP servers failed to initialize: " +
        "alpha: MCP error -32000: Connection closed; " +
        `zeta: spawn ${MISSING_COMMAND} ENOENT`,
    );
    const entry = await harness.entry("zeta");
    expect(entry?.required).toBe(true);
  });

  it("reports no required failure when every required server is ready", async () => {
    harness = await CatalogHarness.create("startup");
    const ok = await startTestServer({ transport: "stdio", script: { tools: [{ name: "echo" }] } });
    harness.defer(() => ok.dispose());
    const { service } = await harness.start(
      toolbusToml({
        servers: {
          ok: { command: ok.command, args: ok.args, required: true },
          optional: { command: MISSING_COMMAND },
        },
      }),
    );
    expect(await service.requiredFailure()).toBeUndefined();
  });

  it("[11] fails an HTTP server whose bearer token variable is empty or unset, before connecting", async () => {
    harness = await CatalogHarness.create("startup");
    const { service } = await harness.start(
      toolbusToml({
        servers: {
          empty: { url: "http://127.0.0.1:9/mcp", bearer_token_env_var: "TOOLBUS_TEST_TOKEN_EMPTY" },
          unset: { url: "http://127.0.0.1:9/mcp", bearer_token_env_var: "TOOLBUS_TEST_TOKEN_UNSET" },
        },
      }),
      { env: { TOOLBUS_TEST_TOKEN_EMPTY: "" } },
    );

    const empty = "Environment variable TOOLBUS_TEST_TOKEN_EMPTY for MCP server 'empty' is empty";
    const unset = "Environment variable TOOLBUS_TEST_TOKEN_UNSET for MCP server 'unset' is not set";
    expect(await service.startup).toEqual({
      ready: [],
      failed: [
        { server: "empty", error: empty },
        { server: "unset", error: unset },
      ],
      cancelled: [],
    });
    await eventually("the status events", () => (states("unset").length === 2 ? true : undefined));
    expect(harness.eventsOn(harness.subjects.serverStatus("empty")).map((e) => e.status)).toEqual([
      { state: "starting" },
      { state: "failed", error: `MCP client for \`empty\` failed to start: ${empty}` },
    ]);
    expect(states("unset")).toEqual(["starting", "failed"]);
  });

  it("masks the credentials of a server's URL in its failure, the summary and the logs", async () => {
    harness = await CatalogHarness.create("startup");
    const web = await startTestServer({ transport: "http", script: { tools: [{ name: "echo" }] } });
    harness.defer(() => web.dispose());
    // fetch refuses a URL with credentials in it, quoting the whole URL in its error.
    const url = new URL(web.url);
    url.username = "svc";
    url.password = "pw-sentinel-4c1e";
    url.search = "?token=tok-sentinel-9b2d&page=1";
    const running = await harness.start(toolbusToml({ servers: { creds: { url: url.toString() } } }));

    const summary = await running.service.startup;
    const masked = `http://svc:***@127.0.0.1:${url.port}/mcp?token=***&page=1`;
    expect(summary.failed.map((f) => f.error.includes(masked))).toEqual([true]);
    await eventually("the failed status", () => (states("creds").length === 2 ? true : undefined));
    const everything = JSON.stringify([summary, harness.events, running.logs, await harness.catalog()]);
    expect(everything).toContain(masked);
    expect(everything).not.toContain("pw-sentinel-4c1e");
    expect(everything).not.toContain("tok-sentinel-9b2d");
  });

  it("logs a flooding stdio server's stderr within its caps, saying what it dropped", async () => {
    harness = await CatalogHarness.create("startup");
    // One 1 MB line, then 20,000 short ones, then it exits without ever speaking MCP.
    const flood =
      "process.stderr.write('x'.repeat(1e6) + '\\n');" +
      "for (let i = 0; i < 20000; i++) process.stderr.write('line ' + i + '\\n');";
    const running = await harness.start(
      toolbusToml({ servers: { noisy: { command: NODE, args: ["-e", flood] } } }),
    );
    await running.service.startup;
    const stderrLogs = () => running.logs.filter((line) => line.server === "noisy" && line.msg !== undefined);
    await eventually("the drop note", () =>
      stderrLogs().some((line) => String(line.msg).includes("stderr lines in 10 s")) ? true : undefined,
    );
    const lines = stderrLogs().filter((line) => line.msg === "MCP server stderr");
    expect({
      count: lines.length,
      first: lines[0]?.stderr,
      next: lines.slice(1, 3).map((line) => line.stderr),
      notes: stderrLogs()
        .filter((line) => line.level === 40)
        .map((line) => line.msg),
    }).toEqual({
      count: 200,
      first: `${"x".repeat(4_096)}… [${1_000_000 - 4_096} more bytes of this line dropped by toolbus]`,
      next: ["line 0", "line 1"],
      notes: [
        "the MCP server wrote more than 200 stderr lines in 10 s; the rest of them are dropped, and counted",
      ],
    });
  });

  it("[8] says an HTTP server that answers 401 is not logged in", async () => {
    harness = await CatalogHarness.create("startup");
    const http = createServer((_req, res) => {
      res.writeHead(401, { "www-authenticate": 'Bearer realm="test"', "content-type": "text/plain" });
      res.end("Unauthorized");
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    harness.defer(() => new Promise((resolve) => http.close(resolve)));
    const address = http.address();
    const url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/mcp`;
    const { service } = await harness.start(toolbusToml({ servers: { locked: { url } } }));

    const summary = await service.startup;
    expect(summary).toEqual({
      ready: [],
      failed: [{ server: "locked", error: "Streamable HTTP error: Error POSTing to endpoint: Unauthorized" }],
      cancelled: [],
    });
    await eventually("the failed status", () => (states("locked").length === 2 ? true : undefined));
    expect(harness.eventsOn(harness.subjects.serverStatus("locked")).map((e) => e.status)).toEqual([
      { state: "starting" },
      {
        state: "failed",
        error: "The locked MCP server is not logged in. Use your client's MCP OAuth sign-in flow.",
      },
    ]);
  });

  it("reports a server that refuses initialize in its own words, not as a failed SSE fallback (a revision toolbus does not speak)", async () => {
    harness = await CatalogHarness.create("startup");
    const requests: string[] = [];
    // A server of a later revision alone: initialize is refused with UnsupportedProtocolVersion.
    const http = createServer((req, res) => {
      requests.push(req.method ?? "");
      if (req.method !== "POST") {
        res.writeHead(405).end();
        return;
      }
      res.writeHead(400, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          jsonrpc: "2.0",
          id: 0,
          error: {
            code: -32022,
            message: "Unsupported protocol version",
            data: { supported: ["2027-03-01"], requested: "2025-11-25" },
          },
        }),
      );
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    harness.defer(() => new Promise((resolve) => http.close(resolve)));
    const address = http.address();
    const url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/mcp`;
    const { service } = await harness.start(toolbusToml({ servers: { modern: { url } } }));

    const summary = await service.startup;
    expect(summary.failed).toEqual([
      {
        server: "modern",
        error:
          "the server refused toolbus's initialize (protocol 2025-11-25): Unsupported protocol version (JSON-RPC -32022); it speaks only 2027-03-01, and toolbus connects to servers over the 2025 revisions and 2026-07-28: use a version of the server that serves one of them",
      },
    ]);
    // No GET: nothing tried the old SSE transport.
    expect(requests.every((method) => method === "POST")).toBe(true);
  });

  it("[8] says a server that refuses the credentials it was sent requires OAuth reauthentication, with the reason", async () => {
    harness = await CatalogHarness.create("startup");
    const http = createServer((_req, res) => {
      res.writeHead(401, { "www-authenticate": 'Bearer realm="test"', "content-type": "text/plain" });
      res.end("Unauthorized");
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    harness.defer(() => new Promise((resolve) => http.close(resolve)));
    const address = http.address();
    const url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/mcp`;
    await harness.start(
      toolbusToml({ servers: { locked: { url, http_headers: { Authorization: "Bearer expired" } } } }),
    );

    await eventually("the failed status", () => (states("locked").length === 2 ? true : undefined));
    const display =
      "The locked MCP server requires OAuth reauthentication. Use your client's MCP OAuth sign-in flow.";
    expect(harness.eventsOn(harness.subjects.serverStatus("locked")).map((e) => e.status)).toEqual([
      { state: "starting" },
      { state: "failed", error: display, reason: "reauthentication_required" },
    ]);
    // The entry is written after the status event is published.
    const entry = await eventually("the failed entry", async () => {
      const stored = await harness.entry("locked");
      return stored?.status === "failed" ? stored : undefined;
    });
    expect(entry).toMatchObject({ statusError: display, statusReason: "reauthentication_required" });
  });

  it("[2] stores each server's timeouts with the reference's defaults, `_sec` winning over `_ms`", async () => {
    harness = await CatalogHarness.create("startup");
    const { service } = await harness.start(
      toolbusToml({
        servers: {
          plain: { command: MISSING_COMMAND },
          legacy: { command: MISSING_COMMAND, startup_timeout_ms: 5000, tool_timeout_sec: 12.5 },
          both: { command: MISSING_COMMAND, startup_timeout_sec: 7, startup_timeout_ms: 5000 },
          parallel: { command: MISSING_COMMAND, supports_parallel_tool_calls: true },
        },
      }),
    );
    await service.startup;

    const facts = async (server: string) => {
      const entry = await harness.entry(server);
      return {
        required: entry?.required,
        startupTimeoutMs: entry?.startupTimeoutMs,
        toolTimeoutMs: entry?.toolTimeoutMs,
        supportsParallelToolCalls: entry?.supportsParallelToolCalls,
      };
    };
    expect({
      plain: await facts("plain"),
      legacy: await facts("legacy"),
      both: await facts("both"),
      parallel: await facts("parallel"),
    }).toEqual({
      plain: {
        required: false,
        startupTimeoutMs: 30_000,
        toolTimeoutMs: 300_000,
        supportsParallelToolCalls: false,
      },
      legacy: {
        required: false,
        startupTimeoutMs: 5_000,
        toolTimeoutMs: 12_500,
        supportsParallelToolCalls: false,
      },
      both: {
        required: false,
        startupTimeoutMs: 7_000,
        toolTimeoutMs: 300_000,
        supportsParallelToolCalls: false,
      },
      parallel: {
        required: false,
        startupTimeoutMs: 30_000,
        toolTimeoutMs: 300_000,
        supportsParallelToolCalls: true,
      },
    });
  });

  it("[4] serves the tools enabled_tools allows and disabled_tools does not deny, by raw name", async () => {
    harness = await CatalogHarness.create("startup");
    const server = await startTestServer({
      transport: "stdio",
      script: { tools: [{ name: "a" }, { name: "b-raw" }, { name: "c" }] },
    });
    harness.defer(() => server.dispose());
    const stdio = { command: server.command, args: server.args };
    const { service } = await harness.start(
      toolbusToml({
        servers: {
          all: stdio,
          none: { ...stdio, enabled_tools: ["a"], disabled_tools: ["a"] },
          some: { ...stdio, enabled_tools: ["a", "b-raw"], disabled_tools: ["b-raw"] },
          denied: { ...stdio, disabled_tools: ["c"] },
        },
      }),
    );
    await service.startup;

    const tools = (await harness.catalog()).tools.map((tool) => [tool.server, tool.rawName]);
    expect(tools).toEqual([
      ["all", "a"],
      ["all", "b-raw"],
      ["all", "c"],
      ["denied", "a"],
      ["denied", "b-raw"],
      ["some", "a"],
    ]);
    const revision = (await harness.entry("none"))!.revision;
    expect(
      await harness.request(harness.subjects.connectorCall("none"), {
        callId: "filtered-1",
        tool: "a",
        preparedRevision: revision,
      }),
    ).toEqual({
      ok: false,
      error: { code: "tool_hidden", message: "tool 'a' is disabled for MCP server 'none'", retryable: false },
    });
    expect(await server.calls()).toEqual([]);
  });

  it("[6] cancels a server still starting when the service stops", async () => {
    harness = await CatalogHarness.create("startup");
    const running = await harness.start(
      toolbusToml({ servers: { mute: { command: NODE, args: ["-e", "setInterval(() => {}, 1000)"] } } }),
    );
    await eventually("the server starting", () => (states("mute").length === 1 ? true : undefined));
    await running.service.stop();

    expect(await running.service.startup).toEqual({ ready: [], failed: [], cancelled: ["mute"] });
    expect(await running.service.requiredFailure()).toBeUndefined();
    await eventually("the cancelled status", () => (states("mute").length === 2 ? true : undefined));
    expect(states("mute")).toEqual(["starting", "cancelled"]);
  });

  it("[12] gives a stdio server only the allow-listed variables, its env_vars and its env, env winning", async () => {
    harness = await CatalogHarness.create("startup");
    const everything = serverEverythingCommand();
    const parentEnv: Record<string, string | undefined> = {
      ...process.env,
      LANG: "en_US.UTF-8",
      TZ: "UTC",
      TOOLBUS_TEST_LOCAL: "from the parent",
      TOOLBUS_TEST_SECRET: "must not leak",
    };
    const { service } = await harness.start(
      toolbusToml({
        servers: {
          everything: {
            ...everything,
            env_vars: ["TOOLBUS_TEST_LOCAL"],
            env: { LANG: "C.UTF-8", TOOLBUS_TEST_EXTRA: "from env" },
          },
        },
      }),
      { env: parentEnv },
    );
    expect(await service.startup).toEqual({ ready: ["everything"], failed: [], cancelled: [] });

    const reply = await harness.ok<{ result: { content: Array<{ text: string }> } }>(
      harness.subjects.connectorCall("everything"),
      { callId: "env-1", tool: "get-env", preparedRevision: (await harness.entry("everything"))!.revision },
    );
    const childEnv = JSON.parse(reply.result.content[0]!.text) as Record<string, string>;
    // The reference's allow-list (docs/reference-behavior.md §1), read independently of the code.
    const allowList = [
      ...["HOME", "LOGNAME", "PATH", "SHELL", "USER", "__CF_USER_TEXT_ENCODING"],
      ...["LANG", "LC_ALL", "TERM", "TMPDIR", "TZ"],
    ];
    const inherited = Object.fromEntries(
      allowList.flatMap((name) => (parentEnv[name] === undefined ? [] : [[name, parentEnv[name]]])),
    );
    expect(childEnv).toEqual({
      ...inherited,
      TOOLBUS_TEST_LOCAL: "from the parent",
      LANG: "C.UTF-8",
      TOOLBUS_TEST_EXTRA: "from env",
    });
  });
});

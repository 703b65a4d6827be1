/**
 * `pnpm start` as a user runs it: one process with every service, driven through its HTTP API,
 * an MCP client and the CLI, then stopped with Ctrl-C.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { cleanupJetStream, freePort, isolation, withPgSchema } from "@toolbus/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVERYTHING, exited, natsUrl, ROOT, startEntry, startToolbus, until } from "./support/pnpm-start.js";

const run = promisify(execFile);

describe("pnpm start", () => {
  const { prefix } = isolation("start");
  let toolbus: ReturnType<typeof startToolbus>;
  let schema: Awaited<ReturnType<typeof withPgSchema>>;
  let url: string;

  beforeAll(async () => {
    schema = await withPgSchema(process.env.DATABASE_URL!, "start");
    const dir = mkdtempSync(join(tmpdir(), "toolbus-start-"));
    const port = await freePort();
    const config = join(dir, "toolbus.toml");
    writeFileSync(
      config,
      [
        "[gateway]",
        `port = ${port}`,
        "",
        "[mcp_servers.everything]",
        `command = ${JSON.stringify(process.execPath)}`,
        `args = [${JSON.stringify(EVERYTHING)}, "stdio"]`,
        'default_tools_approval_mode = "approve"',
        "",
      ].join("\n"),
    );
    toolbus = startToolbus(["--config", config], {
      TOOLBUS_PREFIX: prefix,
      NATS_URL: natsUrl,
      DATABASE_URL: schema.url,
    });
    await until(() => toolbus.output().includes("MCP endpoint"), "the start-up announcement");
    url = `http://127.0.0.1:${port}`;
  });

  afterAll(async () => {
    if (toolbus?.child.exitCode === null) toolbus.child.kill("SIGKILL");
    await cleanupJetStream(natsUrl, prefix);
    await schema?.drop();
  });

  it("announces the console and the MCP endpoint", () => {
    expect(toolbus.output()).toContain(`console        ${url}/`);
    expect(toolbus.output()).toContain(`MCP endpoint   ${url}/mcp`);
  });

  it("serves the console, the health probes and the servers over HTTP", async () => {
    const [health, servers, page] = await Promise.all([
      fetch(`${url}/healthz`),
      fetch(`${url}/v1/servers`).then((r) => r.json()),
      fetch(`${url}/`),
    ]);
    expect(health.status).toBe(200);
    expect((servers as { servers: unknown[] }).servers).toEqual([
      expect.objectContaining({ name: "everything", status: "ready" }),
    ]);
    expect(page.headers.get("content-type")).toContain("text/html");
  });

  it("answers an MCP client's echo through the whole path", async () => {
    const client = new Client({ name: "e2e", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
    const tools = await client.listTools();
    const echo = tools.tools.find((tool) => tool.name.endsWith("echo"))!;
    const result = await client.callTool({ name: echo.name, arguments: { message: "through toolbus" } });
    await client.close();
    expect(result.content).toEqual([{ type: "text", text: "Echo: through toolbus" }]);
  });

  it("is driven by the CLI with the same prefix", async () => {
    const { stdout } = await run(process.execPath, ["packages/cli/bin/toolbus.js", "servers", "--json"], {
      cwd: ROOT,
      env: { ...process.env, TOOLBUS_PREFIX: prefix, NATS_URL: natsUrl },
    });
    expect(JSON.parse(stdout)).toEqual([expect.objectContaining({ name: "everything", status: "ready" })]);
  });

  it("stops cleanly on Ctrl-C", async () => {
    toolbus.child.kill("SIGINT");
    const late = new Promise<string>((resolve) =>
      setTimeout(() => resolve("still running after 30 s"), 30_000),
    );
    const outcome = await Promise.race([exited(toolbus.child), late]);
    // On failure, the last output says which part did not stop.
    expect({ outcome, tail: outcome === 0 ? "" : toolbus.output().slice(-2_000) }).toEqual({
      outcome: 0,
      tail: "",
    });
  });
});

describe("pnpm start with bad input", () => {
  it("names the broken config file and exits non-zero", async () => {
    const dir = mkdtempSync(join(tmpdir(), "toolbus-bad-"));
    const config = join(dir, "toolbus.toml");
    writeFileSync(config, "[mcp_servers.bad]\nurl = 42\ncommand = []\n");
    const toolbus = startToolbus(["--config", config], { NATS_URL: natsUrl });
    const code = await exited(toolbus.child);
    expect(code).not.toBe(0);
    expect(toolbus.output()).toContain("toolbus could not start");
    expect(toolbus.output()).toContain(config);
  });

  it("says how to reach NATS when NATS_URL points nowhere", async () => {
    const port = await freePort();
    const toolbus = startToolbus([], { NATS_URL: `nats://127.0.0.1:${port}` });
    const code = await exited(toolbus.child);
    expect(code).not.toBe(0);
    expect(toolbus.output()).toContain(`NATS is not reachable at nats://127.0.0.1:${port}`);
  });

  it("says the port is in use, and how to choose another, before starting anything", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const address = taken.address();
    const port = typeof address === "object" && address ? address.port : 0;
    try {
      const toolbus = startToolbus([], { NATS_URL: natsUrl, TOOLBUS_HTTP_PORT: String(port) });
      const code = await exited(toolbus.child);
      expect({ code, output: toolbus.output().trim() }).toEqual({
        code: 2,
        output:
          `toolbus could not start: port 127.0.0.1:${port} is already in use (another toolbus?): stop what uses it, ` +
          "or choose another with TOOLBUS_HTTP_PORT=<port> or [gateway] port in toolbus.toml.",
      });
    } finally {
      taken.close();
    }
  });

  it("says Postgres is not reachable at DATABASE_URL, without its password, and what to do", async () => {
    const port = await freePort();
    const toolbus = startToolbus([], {
      NATS_URL: natsUrl,
      TOOLBUS_HTTP_PORT: "0",
      DATABASE_URL: `postgres://toolbus:secret@127.0.0.1:${port}/toolbus`,
    });
    const code = await exited(toolbus.child);
    expect(code).toBe(2);
    expect(toolbus.output()).toContain(
      `toolbus could not start: Postgres is not reachable at DATABASE_URL (postgres://toolbus:***@127.0.0.1:${port}/toolbus)`,
    );
    expect(toolbus.output()).toContain("or unset DATABASE_URL to use an embedded PGlite");
    expect(toolbus.output()).not.toContain("secret");
  });
});

/** A config with these servers, on a free gateway port, in a folder of its own. */
function configWith(lines: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), "toolbus-servers-"));
  const config = join(dir, "toolbus.toml");
  writeFileSync(config, ["[gateway]", "port = 0", "", ...lines, ""].join("\n"));
  return config;
}

const EVERYTHING_SERVER = [
  "[mcp_servers.everything]",
  `command = ${JSON.stringify(process.execPath)}`,
  `args = [${JSON.stringify(EVERYTHING)}, "stdio"]`,
];

describe("pnpm start and toolbus start with a required server that fails", () => {
  const MISSING = "/nonexistent/toolbus-test-command";
  const config = configWith([
    ...EVERYTHING_SERVER,
    "[mcp_servers.docs]",
    `command = ${JSON.stringify(MISSING)}`,
    "required = true",
  ]);
  const expected = `toolbus could not start: required MCP servers failed to initialize: docs: spawn ${MISSING} ENOENT`;

  it.each([
    ["pnpm start", [join(ROOT, "packages/all-in-one/src/main.ts")]],
    ["toolbus start", [join(ROOT, "packages/cli/src/main.ts"), "start"]],
  ])(
    "[10] %s stops with the reference's message and a non-zero exit",
    async (_, entry) => {
      const { prefix } = isolation("required");
      const schema = await withPgSchema(process.env.DATABASE_URL!, "required");
      try {
        const toolbus = startEntry(entry, ["--config", config], {
          TOOLBUS_PREFIX: prefix,
          NATS_URL: natsUrl,
          DATABASE_URL: schema.url,
        });
        const code = await exited(toolbus.child);
        expect({
          failed: code !== 0,
          lines: toolbus
            .output()
            .split("\n")
            .filter((line) => line.startsWith("toolbus could not start")),
        }).toEqual({
          failed: true,
          lines: [expected],
        });
        expect(toolbus.output()).not.toContain("toolbus is running");
      } finally {
        await cleanupJetStream(natsUrl, prefix);
        await schema.drop();
      }
    },
    120_000,
  );
});

describe("pnpm start with a server whose name is invalid", () => {
  it("[3] fails only that server, with the reference's message, and starts the rest", async () => {
    const { prefix } = isolation("badname");
    const schema = await withPgSchema(process.env.DATABASE_URL!, "badname");
    const config = configWith([...EVERYTHING_SERVER, '[mcp_servers."bad name"]', 'command = "x"']);
    const toolbus = startToolbus(["--config", config], {
      TOOLBUS_PREFIX: prefix,
      NATS_URL: natsUrl,
      DATABASE_URL: schema.url,
      LOG_LEVEL: "info",
    });
    try {
      await until(() => toolbus.output().includes("MCP endpoint"), "the start-up announcement");
      expect(toolbus.output()).toContain("toolbus is running (1 server(s) ready, 1 failed)");
      expect(toolbus.output()).toContain(
        "MCP client for `bad name` failed to start: Invalid MCP server name 'bad name': must match pattern ^[a-zA-Z0-9_-]+$",
      );
      const url = toolbus.output().match(/MCP endpoint {3}(\S+)\/mcp/)![1];
      const servers = (await fetch(`${url}/v1/servers`).then((r) => r.json())) as { servers: unknown[] };
      expect(servers.servers).toEqual([expect.objectContaining({ name: "everything", status: "ready" })]);
    } finally {
      toolbus.child.kill("SIGKILL");
      await exited(toolbus.child);
      await cleanupJetStream(natsUrl, prefix);
      await schema.drop();
    }
  }, 120_000);
});

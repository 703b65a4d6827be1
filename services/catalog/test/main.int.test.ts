// The catalog service as a process (src/main.ts): a bad config or a failed required server
// stops it with the reference's messages (checklist 1, 10), and SIGTERM shuts it down
// cleanly, stdio children included.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { CatalogHarness, eventually, natsUrl, toolbusToml } from "./support/harness.js";
import { rawServer } from "./support/raw-server.js";

const MAIN = fileURLToPath(new URL("../src/main.ts", import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

let harness: CatalogHarness;
afterEach(async () => {
  await harness?.close();
});

interface Run {
  child: ChildProcess;
  stdout: string[];
  stderr: () => string;
  exited: Promise<number | null>;
}

/** Runs the service from source with a config file and this test's prefix. */
async function runCatalog(configText: string, extraArgs: string[] = []): Promise<Run> {
  const dir = await mkdtemp(join(tmpdir(), "toolbus-main-"));
  harness.defer(() => rm(dir, { recursive: true, force: true }));
  const configPath = join(dir, "toolbus.toml");
  await writeFile(configPath, configText);
  const child = spawn(
    process.execPath,
    ["--conditions=@toolbus/source", "--import", TSX, MAIN, "--config", configPath, ...extraArgs],
    {
      env: { ...process.env, NATS_URL: natsUrl(), TOOLBUS_PREFIX: harness.prefix, LOG_LEVEL: "info" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  harness.defer(async () => {
    if (child.exitCode === null) child.kill("SIGKILL");
  });
  const stdout: string[] = [];
  let stderr = "";
  let pending = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    const lines = (pending + chunk.toString("utf8")).split("\n");
    pending = lines.pop() ?? "";
    stdout.push(...lines);
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, stdout, stderr: () => stderr, exited };
}

function logLines(run: Run): Array<Record<string, unknown>> {
  return run.stdout.flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

describe("the catalog process", () => {
  it("[1] refuses a config with problems, listing every one, and exits 1", async () => {
    harness = await CatalogHarness.create("main");
    const run = await runCatalog(
      [
        "[mcp_servers.typo]",
        "command = 5",
        "[mcp_servers.none]",
        "required = true",
        "[mcp_servers.both]",
        'command = "x"',
        'url = "http://127.0.0.1:9/mcp"',
        "[mcp_servers.web]",
        'url = "http://127.0.0.1:9/mcp"',
        'args = ["a"]',
      ].join("\n"),
    );
    expect(await run.exited).toBe(1);
    const path = run.stderr().match(/ (\/\S+toolbus\.toml):/)?.[1];
    expect(run.stderr()).toBe(
      [
        "Invalid toolbus config (4 problems):",
        `  ${path}: mcp_servers.typo.command: expected a string, got 5`,
        `  ${path}: mcp_servers.none: invalid transport`,
        `  ${path}: mcp_servers.both: url is not supported for stdio`,
        `  ${path}: mcp_servers.web: args is not supported for streamable_http`,
        "",
      ].join("\n"),
    );
  }, 60_000);

  it("[10] exits 1 with the reference's message when a required server does not start", async () => {
    harness = await CatalogHarness.create("main");
    const run = await runCatalog(
      toolbusToml({
        servers: {
          docs: { command: "/nonexistent/toolbus-test-command", required: true },
          extra: { command: "/nonexistent/toolbus-test-command" },
        },
      }),
    );
    expect(await run.exited).toBe(1);
    expect(logLines(run).filter((line) => line.level === 60)).toEqual([
      expect.objectContaining({
        msg: "required MCP servers failed to initialize: docs: spawn /nonexistent/toolbus-test-command ENOENT",
      }),
    ]);
  }, 60_000);

  it("exits 1 when --servers names a server the config lacks", async () => {
    harness = await CatalogHarness.create("main");
    const run = await runCatalog(toolbusToml({ servers: { docs: { command: "/nonexistent/x" } } }), [
      "--servers",
      "docs,nope",
    ]);
    expect(await run.exited).toBe(1);
    expect(logLines(run).filter((line) => line.level === 60)).toEqual([
      expect.objectContaining({
        msg: expect.stringMatching(
          /^--servers names 'nope', not configured in \/\S+toolbus\.toml; configured: docs$/,
        ),
      }),
    ]);
  }, 60_000);

  it("refuses to start on a bus nobody provisioned, naming what is missing and what to run", async () => {
    harness = await CatalogHarness.create("main", { provision: false });
    const run = await runCatalog(toolbusToml({ servers: { docs: { command: "/nonexistent/x" } } }));
    expect(await run.exited).toBe(1);
    const stderr = run.stderr();
    expect(stderr).toMatch(/^catalog: the JetStream assets are not as the contract gives them: /);
    expect(stderr).toContain(`stream KV_${harness.subjects.kv.catalog} does not exist`);
    expect(stderr).toContain("Run `toolbus provision`");
    // Nothing was made in its place.
    expect(await harness.entry("docs").catch(() => "no bucket")).toBe("no bucket");
  }, 60_000);

  it("--connectors-only runs each server's connector and answers no catalog.* request", async () => {
    harness = await CatalogHarness.create("main");
    const server = await rawServer({
      toolPages: [{ tools: [{ name: "echo", inputSchema: { type: "object" } }] }],
    });
    harness.defer(() => server.dispose());
    const run = await runCatalog(
      toolbusToml({ servers: { raw: { command: server.command, args: server.args } } }),
      ["--connectors-only"],
    );
    await eventually("the connector's entry", async () => {
      const entry = await harness.entry("raw");
      return entry?.status === "ready" ? entry : undefined;
    });
    await expect(harness.request(harness.subjects.catalogGet, { exposure: "all" }, 2_000)).rejects.toThrow(
      /503|no responders/i,
    );
    run.child.kill("SIGTERM");
    expect(await run.exited).toBe(0);
  }, 60_000);

  it("stops on SIGTERM with exit code 0, and its stdio servers with it", async () => {
    harness = await CatalogHarness.create("main");
    const server = await rawServer({
      toolPages: [{ tools: [{ name: "echo", inputSchema: { type: "object" } }] }],
    });
    harness.defer(() => server.dispose());
    const run = await runCatalog(
      toolbusToml({ servers: { raw: { command: server.command, args: server.args } } }),
    );
    await eventually(
      "the service ready",
      () => logLines(run).find((line) => line.msg === "catalog ready"),
      30_000,
    );
    const pid = await server.pid();
    expect(isAlive(pid)).toBe(true);

    run.child.kill("SIGTERM");
    expect(await run.exited).toBe(0);
    await eventually("the stdio server gone", () => (isAlive(pid) ? undefined : true), 5_000);
  }, 60_000);
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

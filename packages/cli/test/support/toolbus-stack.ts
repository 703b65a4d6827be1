/**
 * A real toolbus for the CLI tests: the catalog and dispatcher services as child processes
 * (from source, like `node --conditions=@toolbus/source --import tsx services/<name>/src/main.ts
 * --config <toolbus.toml>`) on an isolated prefix, with the testkit's scriptable MCP server as
 * server `test` (approval mode `approve`, so no approvals service is needed), ready when a call
 * through the dispatcher completes.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { cleanupJetStream, isolation } from "@toolbus/testkit";
import { type StdioTestServer, startTestServer, type TestServerScript } from "@toolbus/testkit/mcp-test-server";
import { sourceArgs } from "./run-cli.js";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));

export function natsUrl(): string {
  const url = process.env.NATS_URL;
  if (!url) throw new Error("NATS_URL is not set: run the tests through vitest (its global setup provides it)");
  return url;
}

export interface ToolbusStack {
  prefix: string;
  natsUrl: string;
  nc: NatsConnection;
  server: StdioTestServer;
  stop(): Promise<void>;
}

interface Service {
  name: string;
  child: ChildProcess;
  output: () => string;
}

export async function startToolbusStack(label: string, script: TestServerScript): Promise<ToolbusStack> {
  const { prefix } = isolation(label);
  const url = natsUrl();
  const server = await startTestServer({ transport: "stdio", script });
  const dir = await mkdtemp(join(tmpdir(), "toolbus-cli-"));
  const configPath = join(dir, "toolbus.toml");
  await writeFile(
    configPath,
    [
      "[mcp_servers.test]",
      `command = ${JSON.stringify(server.command)}`,
      `args = ${JSON.stringify(server.args)}`,
      'default_tools_approval_mode = "approve"',
      "",
    ].join("\n"),
  );
  const nc = await connect({ servers: url });
  const services = ["catalog", "dispatcher"].map((name) => startService(name, configPath, prefix, url));
  const stop = async () => {
    await Promise.all(services.map(stopService));
    await nc.close();
    await server.dispose();
    await cleanupJetStream(url, prefix);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitUntilCallable(nc, prefix, services);
  } catch (error) {
    await stop();
    throw error;
  }
  return { prefix, natsUrl: url, nc, server, stop };
}

function startService(name: string, configPath: string, prefix: string, url: string): Service {
  const main = join(repoRoot, "services", name, "src", "main.ts");
  const child = spawn(process.execPath, sourceArgs(main, ["--config", configPath]), {
    cwd: repoRoot,
    env: { ...process.env, NATS_URL: url, TOOLBUS_PREFIX: prefix, LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-16_384);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  return { name, child, output: () => output };
}

async function stopService(service: Service): Promise<void> {
  const { child } = service;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Until a dispatch of `mcp__test__echo` completes: the catalog listed the server and the dispatcher sees it. */
async function waitUntilCallable(nc: NatsConnection, prefix: string, services: Service[]): Promise<void> {
  const deadline = Date.now() + 45_000;
  for (let attempt = 0; ; attempt++) {
    for (const service of services) {
      if (service.child.exitCode !== null) {
        throw new Error(`the ${service.name} service exited with ${service.child.exitCode}:\n${service.output()}`);
      }
    }
    try {
      const reply = await nc.request(
        `${prefix}.dispatch.call`,
        JSON.stringify({ callId: `warm-up-${attempt}`, tool: "mcp__test__echo", arguments: "{}" }),
        { timeout: 5_000 },
      );
      const body = reply.json<{ ok: boolean; result?: { status?: string } }>();
      if (body.ok && body.result?.status === "completed") return;
    } catch {
      // Not serving yet.
    }
    if (Date.now() > deadline) {
      throw new Error(
        `toolbus did not become callable within 45 s\n${services.map((s) => `--- ${s.name}\n${s.output()}`).join("\n")}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

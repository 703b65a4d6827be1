/**
 * A real toolbus for the CLI tests: the catalog and dispatcher services as child processes
 * (from source, like `node --conditions=@toolbus/source --import tsx services/<name>/src/main.ts
 * --config <toolbus.toml>`) on an isolated prefix, with the testkit's scriptable MCP server as
 * server `test`. With approval mode `approve` no approvals service is needed (the stack publishes
 * the policy it would) and the stack is ready when a call through the dispatcher completes; with `prompt`, the approvals service runs
 * too (on a Postgres schema of its own) and the stack is ready when it answers a list request.
 * The prefix is provisioned before any service starts, as `toolbus provision` does.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import {
  approvalPolicyOf,
  cleanupJetStream,
  isolation,
  provisionPrefix,
  publishApprovalPolicy,
  withPgSchema,
} from "@toolbus/testkit";
import {
  type StdioTestServer,
  startTestServer,
  type TestServerScript,
} from "@toolbus/testkit/mcp-test-server";
import { sourceArgs } from "./run-cli.js";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));

export function natsUrl(): string {
  const url = process.env.NATS_URL;
  if (!url)
    throw new Error("NATS_URL is not set: run the tests through vitest (its global setup provides it)");
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

export interface StackOptions {
  /**
   * The server's `default_tools_approval_mode`, by either name. `approve` / `never_ask` (default):
   * calls need nobody; `prompt` / `always_ask`: every call waits for a human.
   */
  approvalMode?: "approve" | "never_ask" | "prompt" | "always_ask";
}

export async function startToolbusStack(
  label: string,
  script: TestServerScript,
  options: StackOptions = {},
): Promise<ToolbusStack> {
  const mode = options.approvalMode ?? "approve";
  const asks = mode === "prompt" || mode === "always_ask";
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
      `default_tools_approval_mode = ${JSON.stringify(mode)}`,
      "",
    ].join("\n"),
  );
  await provisionPrefix(url, prefix);
  const nc = await connect({ servers: url });
  // Without an approvals service, the policy it would publish is stood in for.
  if (!asks) await publishApprovalPolicy(nc, prefix, await approvalPolicyOf(configPath));
  const schema = asks ? await withPgSchema(databaseUrl(), label) : undefined;
  const services = [
    startService("catalog", configPath, prefix, url),
    startService("dispatcher", configPath, prefix, url),
    ...(schema
      ? [startService("approvals", configPath, prefix, url, { DATABASE_URL: schema.url }, ["--port", "0"])]
      : []),
  ];
  const stop = async () => {
    await Promise.all(services.map(stopService));
    await schema?.drop();
    await nc.close();
    await server.dispose();
    await cleanupJetStream(url, prefix);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    if (!asks) await waitUntilCallable(nc, prefix, services);
    else await waitUntilApprovalsAnswer(nc, prefix, services);
  } catch (error) {
    await stop();
    throw error;
  }
  return { prefix, natsUrl: url, nc, server, stop };
}

function databaseUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url)
    throw new Error("DATABASE_URL is not set: run the tests through vitest (its global setup provides it)");
  return url;
}

function startService(
  name: string,
  configPath: string,
  prefix: string,
  url: string,
  env: Record<string, string> = {},
  args: string[] = [],
): Service {
  const main = join(repoRoot, "services", name, "src", "main.ts");
  const child = spawn(process.execPath, sourceArgs(main, ["--config", configPath, ...args]), {
    cwd: repoRoot,
    env: { ...process.env, NATS_URL: url, TOOLBUS_PREFIX: prefix, LOG_LEVEL: "warn", ...env },
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

/**
 * Until the approvals service answers a list request and the dispatcher knows `mcp__test__echo`:
 * a call with a fingerprint the tool cannot have is rejected as stale (before any approval) only
 * once the dispatcher's catalog copy has the tool.
 */
async function waitUntilApprovalsAnswer(
  nc: NatsConnection,
  prefix: string,
  services: Service[],
): Promise<void> {
  let attempt = 0;
  await waitFor(services, async () => {
    attempt += 1;
    const list = (await nc.request(`${prefix}.approvals.list`, "{}", { timeout: 5_000 })).json<{
      ok: boolean;
    }>();
    const probe = JSON.stringify({
      callId: `warm-up-${attempt}`,
      tool: "mcp__test__echo",
      arguments: "{}",
      toolFingerprint: "0".repeat(64),
    });
    const call = (await nc.request(`${prefix}.dispatch.call`, probe, { timeout: 5_000 })).json<{
      ok: boolean;
      result?: { error?: string };
    }>();
    return list.ok && call.ok && (call.result?.error ?? "").includes("catalog changed");
  });
}

/** Until a dispatch of `mcp__test__echo` completes: the catalog listed the server and the dispatcher sees it. */
async function waitUntilCallable(nc: NatsConnection, prefix: string, services: Service[]): Promise<void> {
  let attempt = 0;
  await waitFor(services, async () => {
    attempt += 1;
    const request = JSON.stringify({
      callId: `warm-up-${attempt}`,
      tool: "mcp__test__echo",
      arguments: "{}",
    });
    const reply = await nc.request(`${prefix}.dispatch.call`, request, { timeout: 5_000 });
    const body = reply.json<{ ok: boolean; result?: { status?: string } }>();
    return body.ok && body.result?.status === "completed";
  });
}

const READY_WITHIN_MS = 45_000;

async function waitFor(services: Service[], ready: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + READY_WITHIN_MS;
  for (;;) {
    for (const service of services) {
      if (service.child.exitCode !== null) {
        throw new Error(
          `the ${service.name} service exited with ${service.child.exitCode}:\n${service.output()}`,
        );
      }
    }
    const isReady = await ready().catch(() => false);
    if (isReady) return;
    if (Date.now() > deadline) {
      throw new Error(
        `toolbus did not become ready within ${READY_WITHIN_MS / 1000} s\n${services.map((s) => `--- ${s.name}\n${s.output()}`).join("\n")}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

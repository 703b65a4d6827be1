/**
 * `pnpm start` with `OTEL_EXPORTER_OTLP_ENDPOINT`: the one process exports its traces and every
 * service's metrics there (flushed when Ctrl-C stops it); a bad `OTEL_*` value stops it before
 * anything starts, with one line naming the variable.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  cleanupJetStream,
  isolation,
  type OtlpReceiver,
  startOtlpReceiver,
  withPgSchema,
} from "@toolbus/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const EVERYTHING = join(
  ROOT,
  "services/catalog/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
);
const natsUrl = process.env.NATS_URL ?? "nats://127.0.0.1:4222";

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

function startToolbus(args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; output: () => string } {
  const child = spawn(
    process.execPath,
    ["--conditions=@toolbus/source", "--import", "tsx", "packages/all-in-one/src/main.ts", ...args],
    { cwd: ROOT, env: { ...process.env, LOG_LEVEL: "warn", ...env }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

async function until(condition: () => boolean, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function exited(child: ChildProcess): Promise<number | null> {
  return child.exitCode !== null
    ? Promise.resolve(child.exitCode)
    : new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

describe("pnpm start with OTEL_EXPORTER_OTLP_ENDPOINT", () => {
  const { prefix } = isolation("start_otel");
  let receiver: OtlpReceiver;
  let toolbus: ReturnType<typeof startToolbus>;
  let schema: Awaited<ReturnType<typeof withPgSchema>>;
  let url: string;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    schema = await withPgSchema(process.env.DATABASE_URL!, "start_otel");
    const dir = mkdtempSync(join(tmpdir(), "toolbus-start-otel-"));
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
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      // Longer than the test: the export the test reads is the one Ctrl-C flushes.
      OTEL_METRIC_EXPORT_INTERVAL: "600000",
    });
    await until(() => toolbus.output().includes("MCP endpoint"), "the start-up announcement");
    url = `http://127.0.0.1:${port}`;
  });

  afterAll(async () => {
    if (toolbus?.child.exitCode === null) toolbus.child.kill("SIGKILL");
    await cleanupJetStream(natsUrl, prefix);
    await schema?.drop();
    await receiver?.close();
  });

  it("exports the calls it served as metrics, and its traces, when stopped with Ctrl-C", async () => {
    for (const callId of ["otel-1", "otel-2"]) {
      const response = await fetch(`${url}/v1/calls`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ callId, tool: "mcp__everything__echo", arguments: '{"message":"hi"}' }),
      });
      expect(((await response.json()) as { status: string }).status).toBe("completed");
    }
    toolbus.child.kill("SIGINT");
    expect(await exited(toolbus.child)).toBe(0);
    const value = (metric: string, attributes: Record<string, string>) => {
      const point = receiver.only(metric, attributes);
      return { service: point.service, value: point.value };
    };
    expect({
      dispatcher: value("toolbus.dispatcher.calls", {
        "mcp.server": "everything",
        "toolbus.call.status": "completed",
      }),
      edge: value("toolbus.gateway.tool_calls", {
        "toolbus.gateway.api": "rest",
        "toolbus.call.status": "completed",
      }),
      traces: receiver.requests.some((request) => request.path === "/v1/traces"),
    }).toEqual({
      dispatcher: { service: "toolbus", value: 2 },
      edge: { service: "toolbus", value: 2 },
      traces: true,
    });
  });
});

describe("pnpm start with a bad OTEL_* value", () => {
  it("names the variable and what it takes, and starts nothing", async () => {
    const toolbus = startToolbus([], {
      NATS_URL: natsUrl,
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318",
      OTEL_METRIC_EXPORT_INTERVAL: "soon",
    });
    const code = await exited(toolbus.child);
    expect({ code, output: toolbus.output().trim() }).toEqual({
      code: 2,
      output:
        "toolbus could not start: invalid configuration (1 problem); fix each and start again:\n" +
        "  - OTEL_METRIC_EXPORT_INTERVAL=soon is not a whole number of milliseconds above 0; " +
        "set e.g. OTEL_METRIC_EXPORT_INTERVAL=10000, or unset it for 10000",
    });
  });
});

/**
 * `pnpm start` with `OTEL_EXPORTER_OTLP_ENDPOINT`: the one process exports its traces and every
 * service's metrics there (flushed when Ctrl-C stops it); a bad `OTEL_*` value stops it before
 * anything starts, with one line naming the variable.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  cleanupJetStream,
  freePort,
  isolation,
  type OtlpReceiver,
  startOtlpReceiver,
  withPgSchema,
} from "@toolbus/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVERYTHING, exited, natsUrl, startToolbus, until } from "./support/pnpm-start.js";

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

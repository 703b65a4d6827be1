// Without OTEL_EXPORTER_OTLP_ENDPOINT nothing is exported, even with the per-signal endpoint
// variables pointing at a receiver, and every service still works.
// Its own worker: the OTEL_* variables and the global providers stay in this file.
import { startTelemetry } from "@toolbus/bus";
import { flushTelemetry, type OtlpReceiver, startOtlpReceiver } from "@toolbus/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Services, startServices, waitFor } from "./support/services.js";

let receiver: OtlpReceiver;
let stopTelemetry: () => Promise<void>;
let s: Services;
let variables: Record<string, string>;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  variables = {
    OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${receiver.endpoint}/v1/metrics`,
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.endpoint}/v1/traces`,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
  };
  Object.assign(process.env, variables);
  stopTelemetry = await startTelemetry({ serviceName: "toolbus-metrics-off-test" });
  s = await startServices({ label: "metrics_off", script: { tools: [{ name: "echo" }] } });
});

afterAll(async () => {
  await s?.stop();
  for (const name of Object.keys(variables ?? {})) delete process.env[name];
  await receiver?.close();
});

describe("metrics without OTEL_EXPORTER_OTLP_ENDPOINT", () => {
  it("exports nothing, through flushes and shutdown, while calls and memory ingest work", async () => {
    const mcp = await s.mcpClient();
    const { tools } = await mcp.listTools();
    const echo = tools.find((tool) => tool.name.endsWith("echo"))?.name ?? "no echo tool listed";
    const result = await mcp.callTool({ name: echo, arguments: { text: "hello" } });
    await s.closeMcpClient(mcp);
    const reply = await s.dispatch({ tool: "mcp__scripted__echo", arguments: "{}" });
    await s.client
      .js()
      .publish(s.subjects.memoryMessage, JSON.stringify({ messageId: "m1", text: "no citation" }));
    await waitFor("the memory message to be counted", () => s.memory.stats().counted === 1);
    // A flush and the shutdown flush would each export whatever a reader had: none sends anything.
    await flushTelemetry();
    await stopTelemetry();
    expect({
      mcp: { isError: result.isError ?? false, content: result.content },
      bus: reply.status,
      received: receiver.requests,
    }).toEqual({
      mcp: { isError: false, content: [{ type: "text", text: expect.stringContaining("hello") }] },
      bus: "completed",
      received: [],
    });
  });
});

import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUS_METRICS } from "../src/metrics.js";
import { startTelemetry } from "../src/telemetry.js";
import { withSpan } from "../src/tracing.js";

// A stand-in OTLP/HTTP collector. This file runs in its own worker, so the env var and the
// global SDK registration stay here.
const received: Array<{ path: string | undefined; type: string | undefined }> = [];
const collector = createServer((req: IncomingMessage, res) => {
  req.resume();
  req.on("end", () => {
    received.push({ path: req.url, type: req.headers["content-type"] });
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
});

beforeAll(async () => {
  await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve));
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
});
afterAll(() => {
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  collector.close();
});

describe("startTelemetry", () => {
  it("exports spans and metrics over OTLP/HTTP protobuf to OTEL_EXPORTER_OTLP_ENDPOINT, flushed by its shutdown function", async () => {
    const stop = await startTelemetry({ serviceName: "bus-telemetry-test" });
    const traceId = await withSpan(
      "test.exported",
      { "mcp.call_id": "call-1" },
      (span) => span.spanContext().traceId,
    );
    BUS_METRICS.create().requests.add(1, {
      "messaging.destination.name": "test.subject",
      "toolbus.outcome": "ok",
    });
    await stop();
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    // The metric export interval (10 s by default) has not passed: shutdown sent the one export.
    expect([...received].sort((a, b) => String(a.path).localeCompare(String(b.path)))).toEqual([
      { path: "/v1/metrics", type: "application/x-protobuf" },
      { path: "/v1/traces", type: "application/x-protobuf" },
    ]);
  });
});

import { ROOT_CONTEXT } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { startTelemetry } from "../src/telemetry.js";
import { injectTraceContext } from "../src/tracing.js";
import { startBus, uniqueName } from "./support.js";

describe("startTelemetry without OTEL_EXPORTER_OTLP_ENDPOINT", () => {
  it("records nothing but still passes the caller's trace context on to the next hop", async () => {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    const stop = await startTelemetry({ serviceName: "bus-telemetry-off-test" });
    try {
      const server = await startBus();
      const downstream = await startBus();
      const next = `${uniqueName()}.next`;
      const first = `${uniqueName()}.first`;
      await downstream.bus.serve(
        { subject: next, name: "next", request: z.object({}) },
        async (_req, ctx) => ({
          traceparent: ctx.headers?.get("traceparent") ?? "",
        }),
      );
      await server.bus.serve({ subject: first, name: "first", request: z.object({}) }, async (_req, ctx) => ({
        recording: ctx.span.isRecording(),
        downstream: await server.bus.request(next, {}, z.object({ traceparent: z.string() })),
      }));
      const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
      const headers = injectTraceContext(undefined, ROOT_CONTEXT);
      headers.set("traceparent", traceparent);
      const reply = await downstream.bus.nc.request(first, "{}", { headers, timeout: 2_000 });
      expect(JSON.parse(reply.string())).toEqual({
        ok: true,
        result: { recording: false, downstream: { traceparent } },
      });
    } finally {
      await stop();
    }
  });
});

import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { NodeSDK } from "@opentelemetry/sdk-node";
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { WireError } from "@toolbus/protocol";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { extractTraceContext, injectTraceContext, withSpan } from "../src/tracing.js";
import { startBus, uniqueName } from "./support.js";

// Each test file runs in its own worker, so this SDK registration stays inside this file.
const exporter = new InMemorySpanExporter();
const sdk = new NodeSDK({
  serviceName: "bus-trace-test",
  spanProcessors: [new SimpleSpanProcessor(exporter)],
  instrumentations: [],
  resourceDetectors: [],
});

beforeAll(() => sdk.start());
afterAll(() => sdk.shutdown());
beforeEach(() => exporter.reset());

const Echo = z.object({ callId: z.string(), fail: z.boolean().optional() });

async function echoService() {
  const server = await startBus();
  const client = await startBus();
  const subject = `${uniqueName()}.echo`;
  await server.bus.serve({ subject, name: "echo", request: Echo }, async (req, ctx) => {
    ctx.logger.info("in handler");
    if (req.fail) throw new Error("handler broke");
    const seen = ctx.span.spanContext();
    return { traceId: seen.traceId, spanId: seen.spanId };
  });
  return { server, client, subject };
}

describe("trace context across the bus", () => {
  it("runs the handler in a server span whose parent is the caller's span", async () => {
    const { server, client, subject } = await echoService();
    const caller = await withSpan("test.caller", {}, async (span) => {
      const seen = await client.bus.request(
        subject,
        { callId: "call-1" },
        z.object({ traceId: z.string(), spanId: z.string() }),
      );
      return { seen, context: span.spanContext() };
    });
    const handlerSpan = exporter.getFinishedSpans().find((s) => s.name === `${server.bus.service.name}.echo`);
    expect({
      traceId: handlerSpan?.spanContext().traceId,
      spanId: handlerSpan?.spanContext().spanId,
      parentSpanId: handlerSpan?.parentSpanContext?.spanId,
      kind: handlerSpan?.kind,
      attributes: handlerSpan?.attributes,
    }).toEqual({
      traceId: caller.context.traceId,
      spanId: caller.seen.spanId,
      parentSpanId: caller.context.spanId,
      kind: SpanKind.SERVER,
      attributes: {
        "messaging.system": "nats",
        "messaging.destination.name": subject,
        "toolbus.endpoint": "echo",
        "mcp.call_id": "call-1",
      },
    });
    expect(caller.seen.traceId).toBe(caller.context.traceId);
  });

  it("puts the trace id on the handler's log lines", async () => {
    const { server, client, subject } = await echoService();
    const traceId = await withSpan("test.caller", {}, async (span) => {
      await client.bus.request(subject, { callId: "call-2" }, z.unknown());
      return span.spanContext().traceId;
    });
    expect(server.lines.find((line) => line.msg === "in handler")).toMatchObject({
      traceId,
      callId: "call-2",
    });
  });

  it("marks the handler span failed when the handler throws", async () => {
    const { server, client, subject } = await echoService();
    await expect(
      client.bus.request(subject, { callId: "call-3", fail: true }, z.unknown()),
    ).rejects.toBeInstanceOf(WireError);
    const handlerSpan = exporter.getFinishedSpans().find((s) => s.name === `${server.bus.service.name}.echo`);
    expect(handlerSpan?.status).toEqual({ code: SpanStatusCode.ERROR, message: "handler broke" });
    expect(handlerSpan?.attributes["toolbus.error.code"]).toBe("internal");
  });

  it("carries the context through a publish to a subscriber", async () => {
    const { bus } = await startBus();
    const subject = `${uniqueName()}.note`;
    const received = new Promise<string | undefined>((resolve) => {
      bus.nc.subscribe(subject, {
        max: 1,
        callback: (_err, msg) =>
          resolve(trace.getSpanContext(extractTraceContext(msg.headers, ROOT_CONTEXT))?.traceId),
      });
    });
    await bus.nc.flush();
    const traceId = await withSpan("test.publisher", {}, (span) => {
      bus.publish(subject, { hello: true });
      return span.spanContext().traceId;
    });
    expect(await received).toBe(traceId);
  });

  it("carries the context in the headers of a JetStream event", async () => {
    const { bus } = await startBus();
    const stream = uniqueName("S");
    const subject = `${uniqueName()}.events.end`;
    const jsm = await bus.jsm();
    await jsm.streams.add({ name: stream, subjects: [subject] });
    try {
      const traceId = await withSpan("test.event", {}, (span) => {
        bus.publishEvent(subject, { callId: "call-4" });
        return span.spanContext().traceId;
      });
      await bus.flushEvents();
      const stored = await jsm.streams.getMessage(stream, { seq: 1 });
      expect(stored?.header.get("traceparent").split("-")[1]).toBe(traceId);
    } finally {
      await jsm.streams.delete(stream);
    }
  });

  it("writes traceparent into headers and reads it back", async () => {
    await withSpan("test.roundtrip", {}, (span) => {
      const headers = injectTraceContext();
      expect(headers.get("traceparent")).toBe(
        `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`,
      );
      expect(trace.getSpanContext(extractTraceContext(headers, ROOT_CONTEXT))).toEqual({
        ...span.spanContext(),
        isRemote: true,
      });
    });
  });

  it("extracts nothing from headers that carry no trace", () => {
    expect(trace.getSpanContext(extractTraceContext(undefined, ROOT_CONTEXT))).toBeUndefined();
  });
});

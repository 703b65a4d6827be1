/**
 * One trace per call (issue item 4): the dispatcher's `toolbus.dispatch.call` span (in this
 * process, recorded by an in-memory exporter) with its `toolbus.approvals.decide` and
 * `toolbus.connector.call` children, the approvals stand-in receiving the trace context, the
 * catalog process's own connector span (exported over OTLP to a collector in this test) in
 * the same trace, and the lifecycle events carrying it. No arguments or results in any span.
 */
import { headers as natsHeaders } from "@nats-io/transport-node";
import { NodeSDK } from "@opentelemetry/sdk-node";
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { injectTraceContext, withSpan } from "@toolbus/bus";
import type { ToolCallReply } from "@toolbus/protocol";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "@toolbus/testkit";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type ApprovalsStandIn, DispatchHarness, type Envelope, eventually } from "./support/harness.js";

// Each test file runs in its own worker, so this registration stays inside this file.
const exporter = new InMemorySpanExporter();
const sdk = new NodeSDK({
  serviceName: "dispatcher-trace-test",
  spanProcessors: [new SimpleSpanProcessor(exporter)],
  instrumentations: [],
  resourceDetectors: [],
});

const SECRET_ARGUMENT = "argument-sentinel-7f3a";
let h: DispatchHarness;
let collector: OtlpReceiver;
let approvals: ApprovalsStandIn;

beforeAll(async () => {
  sdk.start();
  collector = await startOtlpReceiver();
  h = await DispatchHarness.start({
    label: "tracing",
    script: { tools: [{ name: "reviewed" }, { name: "echo" }] },
    toolModes: { reviewed: "prompt" },
    catalogEnv: collector.traceEnv,
  });
  approvals = await h.approvals(() => ({ decision: "approved", source: "human" }));
});
afterAll(async () => {
  await h?.close();
  await collector?.close();
  await sdk.shutdown();
});
beforeEach(() => exporter.reset());

const ownSpansOf = (callId: string) =>
  exporter.getFinishedSpans().filter((span) => span.attributes["mcp.call_id"] === callId);

async function tracedCall(
  tool: string,
  callId: string,
): Promise<{ reply: ToolCallReply; own: ReadableSpan[]; remote: ReceivedSpan }> {
  const reply = await h.ok({ callId, tool, arguments: JSON.stringify({ secret: SECRET_ARGUMENT }) });
  const own = await eventually("the dispatcher's three spans", () => {
    const spans = ownSpansOf(callId);
    return spans.length >= 3 ? spans : undefined;
  });
  const remote = await eventually("the catalog's connector span", () =>
    collector.spans.find(
      (span) => span.service === "toolbus-catalog" && span.attributes["mcp.call_id"] === callId,
    ),
  );
  return { reply, own, remote };
}

describe("one trace per call", () => {
  it("nests approval and connector spans under toolbus.dispatch.call, and the catalog's span under the connector call", async () => {
    const callId = h.callId();
    const { reply, own, remote } = await tracedCall("mcp__scripted__reviewed", callId);
    const root = own.find((span) => span.name === "toolbus.dispatch.call")!;
    const traceId = root.spanContext().traceId;
    const nameOf = (spanId: string | undefined) =>
      own.find((span) => span.spanContext().spanId === spanId)?.name ??
      (spanId === undefined ? null : "elsewhere");
    const connectorCall = own.find((span) => span.name === "toolbus.connector.call")!;
    const decide = own.find((span) => span.name === "toolbus.approvals.decide")!;
    const [approval] = approvals.requests.filter(({ request }) => request.callId === callId);
    const events = h.eventsOf(callId);
    expect({
      status: reply.status,
      own: own
        .map((span) => ({
          name: span.name,
          parent: nameOf(span.parentSpanContext?.spanId),
          sameTrace: span.spanContext().traceId === traceId,
          attributes: span.attributes,
        }))
        .sort((a, b) => a.name.localeCompare(b.name)),
      catalogSpan: {
        name: remote.name,
        sameTrace: remote.traceId === traceId,
        parentIsConnectorCall: remote.parentSpanId === connectorCall.spanContext().spanId,
        attributes: {
          "mcp.call_id": remote.attributes["mcp.call_id"],
          "mcp.server": remote.attributes["mcp.server"],
          "mcp.tool": remote.attributes["mcp.tool"],
        },
      },
      approvalTraceparent: approval?.traceparent,
      eventTraces: events.map((event) => event.traceparent?.split("-")[1]),
    }).toEqual({
      status: "completed",
      own: [
        {
          name: "toolbus.approvals.decide",
          parent: "toolbus.dispatch.call",
          sameTrace: true,
          attributes: { "mcp.call_id": callId },
        },
        {
          name: "toolbus.connector.call",
          parent: "toolbus.dispatch.call",
          sameTrace: true,
          attributes: { "mcp.call_id": callId, "mcp.server": "scripted", "mcp.tool": "reviewed" },
        },
        {
          name: "toolbus.dispatch.call",
          parent: null,
          sameTrace: true,
          attributes: {
            "messaging.system": "nats",
            "messaging.destination.name": h.subjects.dispatchCall,
            "toolbus.endpoint": "dispatch-call",
            "mcp.call_id": callId,
            "mcp.server": "scripted",
            "mcp.tool": "reviewed",
          },
        },
      ],
      catalogSpan: {
        // Served on the connector's own bus, named after its identity.
        name: "connector-scripted.connector-scripted-call",
        sameTrace: true,
        parentIsConnectorCall: true,
        attributes: { "mcp.call_id": callId, "mcp.server": "scripted", "mcp.tool": "reviewed" },
      },
      approvalTraceparent: `00-${traceId}-${decide.spanContext().spanId}-01`,
      eventTraces: [traceId, traceId],
    });
  });

  it("gives two calls two traces", async () => {
    const first = await tracedCall("mcp__scripted__echo", h.callId());
    const second = await tracedCall("mcp__scripted__echo", h.callId());
    const traceOf = (spans: ReadableSpan[]) => new Set(spans.map((span) => span.spanContext().traceId));
    const [a] = traceOf(first.own);
    const [b] = traceOf(second.own);
    expect({
      firstTraces: traceOf(first.own).size,
      secondTraces: traceOf(second.own).size,
      distinct: a !== b,
      remoteFollows: [first.remote.traceId === a, second.remote.traceId === b],
    }).toEqual({ firstTraces: 1, secondTraces: 1, distinct: true, remoteFollows: [true, true] });
  });

  it("continues the trace of a caller that sends one", async () => {
    const callId = h.callId();
    const caller = await withSpan("test.model-runtime", {}, async (span) => {
      const reply = await h.nc.request(
        h.subjects.dispatchCall,
        JSON.stringify({ callId, tool: "mcp__scripted__echo", arguments: "{}" }),
        { timeout: 10_000, headers: injectTraceContext(natsHeaders()) },
      );
      return { envelope: reply.json<Envelope<ToolCallReply>>(), context: span.spanContext() };
    });
    const root = await eventually("the dispatch span", () =>
      ownSpansOf(callId).find((span) => span.name === "toolbus.dispatch.call"),
    );
    expect({
      ok: caller.envelope.ok,
      traceId: root.spanContext().traceId,
      parent: root.parentSpanContext?.spanId,
    }).toEqual({ ok: true, traceId: caller.context.traceId, parent: caller.context.spanId });
  });

  it("puts neither arguments nor results in any span, here or in the catalog", async () => {
    const callId = h.callId();
    const { reply } = await tracedCall("mcp__scripted__echo", callId);
    const leaks = [
      ...exporter
        .getFinishedSpans()
        .flatMap((span) => [
          ...Object.values(span.attributes),
          ...span.events.flatMap((event) => Object.values(event.attributes ?? {})),
        ]),
      ...collector.spans.flatMap((span) => Object.values(span.attributes)),
    ].filter((value) => String(value).includes(SECRET_ARGUMENT));
    expect({ echoed: JSON.stringify(reply.result).includes(SECRET_ARGUMENT), leaks }).toEqual({
      echoed: true,
      leaks: [],
    });
  });
});

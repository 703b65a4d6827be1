/**
 * One trace per call, from the edge: the gateway's `toolbus.gateway.call` span (this process,
 * recorded by an in-memory exporter) is the root of the call's trace, and the dispatcher's and
 * the catalog's spans (child processes, exported over OTLP to a stand-in collector) descend from
 * it. A client's W3C trace context, in the MCP request's `_meta` or the HTTP headers (MCP and
 * REST), is continued: the call's trace is the client's, under the client's span.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { NodeSDK } from "@opentelemetry/sdk-node";
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { type OtlpReceiver, startOtlpReceiver } from "@toolbus/testkit";
import { startTestServer } from "@toolbus/testkit/mcp-test-server";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { GatewayService } from "../src/gateway-service.js";
import { eventually, mcpClient, Stack, tomlFor } from "./support/stack.js";

// Each test file runs in its own worker, so this registration stays inside this file.
const exporter = new InMemorySpanExporter();
const sdk = new NodeSDK({
  serviceName: "gateway-trace-test",
  spanProcessors: [new SimpleSpanProcessor(exporter)],
  instrumentations: [],
  resourceDetectors: [],
});

/** A client's span, as W3C `traceparent` carries it; each test has its own trace. */
function clientSpan(traceDigit: string) {
  const traceId = traceDigit.repeat(32);
  const spanId = "b7ad6b7169203331";
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

let stack: Stack;
let gateway: GatewayService;
let receiver: OtlpReceiver;
const clients: Client[] = [];

beforeAll(async () => {
  sdk.start();
  receiver = await startOtlpReceiver();
  const scripted = await startTestServer({ transport: "stdio", script: { tools: [{ name: "echo" }] } });
  stack = await Stack.start(
    "gw_trace",
    tomlFor([{ name: "scripted", command: scripted.command, args: scripted.args }]),
    ["catalog", "dispatcher"],
    receiver.traceEnv,
  );
  stack.defer(() => scripted.dispose());
  gateway = await stack.gateway();
}, 90_000);

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  await stack?.close();
  await receiver?.close();
  await sdk.shutdown();
});

beforeEach(() => exporter.reset());

async function client(headers?: Record<string, string>): Promise<Client> {
  const connected = await mcpClient(gateway, headers ? { headers } : {});
  clients.push(connected);
  return connected;
}

/** The gateway's one call span since the test began. */
function gatewaySpan() {
  const spans = exporter.getFinishedSpans().filter((span) => span.name === "toolbus.gateway.call");
  expect(spans).toHaveLength(1);
  return spans[0]!;
}

/** Every span of the trace the gateway's call span is in, as a tree of names, with their call ids. */
async function callTrace() {
  const root = gatewaySpan();
  const { traceId, spanId } = root.spanContext();
  // The dispatcher's three spans and the catalog's connector span.
  const remote = await eventually("the dispatcher's and the catalog's spans", () => {
    const spans = receiver.spans.filter((span) => span.traceId === traceId);
    return spans.length >= 4 ? spans : undefined;
  });
  const spans = [
    {
      service: "gateway",
      spanId,
      parentSpanId: root.parentSpanContext?.spanId,
      name: root.name,
      attributes: root.attributes,
    },
    ...remote,
  ];
  const nameOf = (id: string | undefined) =>
    id === undefined ? null : (spans.find((span) => span.spanId === id)?.name ?? id);
  return {
    traceId,
    root,
    tree: spans
      .map((span) => ({ service: span.service, name: span.name, parent: nameOf(span.parentSpanId) }))
      .sort((a, b) => a.name.localeCompare(b.name)),
    callIds: [...new Set(spans.map((span) => span.attributes["mcp.call_id"]))],
  };
}

/** The tree below the gateway's span; `parent` is what the gateway's span continues. */
function expectedTree(parent: string | null) {
  return [
    {
      service: "toolbus-catalog",
      name: "connector-scripted.connector-scripted-call",
      parent: "toolbus.connector.call",
    },
    { service: "toolbus-dispatcher", name: "toolbus.approvals.decide", parent: "toolbus.dispatch.call" },
    { service: "toolbus-dispatcher", name: "toolbus.connector.call", parent: "toolbus.dispatch.call" },
    { service: "toolbus-dispatcher", name: "toolbus.dispatch.call", parent: "toolbus.gateway.call" },
    { service: "gateway", name: "toolbus.gateway.call", parent },
  ];
}

describe("a tools/call through the MCP edge", () => {
  it("continues the trace of the client's _meta.traceparent, rooted at the gateway's span", async () => {
    const caller = clientSpan("1");
    const result = await (await client()).callTool({
      name: "scripted__echo",
      arguments: { said: "hi" },
      _meta: { traceparent: caller.traceparent },
    });
    const trace = await callTrace();
    expect({
      isError: result.isError ?? false,
      traceId: trace.traceId,
      tree: trace.tree,
      kind: trace.root.kind,
      attributes: trace.root.attributes,
      callIds: trace.callIds,
    }).toEqual({
      isError: false,
      traceId: caller.traceId,
      tree: expectedTree(caller.spanId),
      kind: SpanKind.SERVER,
      attributes: {
        "mcp.call_id": expect.stringMatching(/^gw-/),
        "toolbus.gateway.api": "mcp",
        "mcp.server": "scripted",
        "mcp.tool": "echo",
      },
      callIds: [trace.root.attributes["mcp.call_id"]],
    });
  });

  it("continues the trace of the HTTP traceparent header when _meta carries none", async () => {
    const caller = clientSpan("2");
    await (await client({ traceparent: caller.traceparent })).callTool({
      name: "scripted__echo",
      arguments: {},
    });
    const trace = await callTrace();
    expect({ traceId: trace.traceId, tree: trace.tree }).toEqual({
      traceId: caller.traceId,
      tree: expectedTree(caller.spanId),
    });
  });

  it("prefers _meta.traceparent, the request's own, over the HTTP header", async () => {
    const header = clientSpan("3");
    const meta = clientSpan("4");
    await (await client({ traceparent: header.traceparent })).callTool({
      name: "scripted__echo",
      arguments: {},
      _meta: { traceparent: meta.traceparent },
    });
    const trace = await callTrace();
    expect({ traceId: trace.traceId, tree: trace.tree }).toEqual({
      traceId: meta.traceId,
      tree: expectedTree(meta.spanId),
    });
  });

  it("starts a new trace at the gateway's span when the client sends no trace context", async () => {
    await (await client()).callTool({ name: "scripted__echo", arguments: {} });
    const trace = await callTrace();
    expect({ tree: trace.tree, callIds: trace.callIds.length }).toEqual({
      tree: expectedTree(null),
      callIds: 1,
    });
  });

  it("starts a new trace when the client's traceparent is malformed", async () => {
    await (await client({ traceparent: "00-not-a-trace-01" })).callTool({
      name: "scripted__echo",
      arguments: {},
      _meta: { traceparent: 42 },
    });
    const trace = await callTrace();
    expect(trace.tree).toEqual(expectedTree(null));
  });

  it("marks the gateway's span failed when the call could not be sent to the dispatcher", async () => {
    const tooLarge = "x".repeat((stack.nc.info?.max_payload ?? 1024 * 1024) + 1024);
    const result = await (await client()).callTool({ name: "scripted__echo", arguments: { tooLarge } });
    const span = gatewaySpan();
    expect({
      isError: result.isError,
      status: span.status.code,
      code: span.attributes["toolbus.error.code"],
    }).toEqual({ isError: true, status: SpanStatusCode.ERROR, code: "payload_too_large" });
  });
});

describe("POST /v1/calls", () => {
  it("continues the trace of the traceparent header, rooted at the gateway's span", async () => {
    const caller = clientSpan("5");
    const response = await fetch(`${gateway.url}/v1/calls`, {
      method: "POST",
      headers: { "content-type": "application/json", traceparent: caller.traceparent },
      body: JSON.stringify({ callId: "rest-traced-1", tool: "mcp__scripted__echo", arguments: "{}" }),
    });
    const trace = await callTrace();
    expect({
      status: ((await response.json()) as { status: string }).status,
      traceId: trace.traceId,
      tree: trace.tree,
      attributes: trace.root.attributes,
      callIds: trace.callIds,
    }).toEqual({
      status: "completed",
      traceId: caller.traceId,
      tree: expectedTree(caller.spanId),
      attributes: { "mcp.call_id": "rest-traced-1", "toolbus.gateway.api": "rest" },
      callIds: ["rest-traced-1"],
    });
  });

  it("starts a new trace at the gateway's span without one", async () => {
    await fetch(`${gateway.url}/v1/calls`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ callId: "rest-untraced-1", tool: "mcp__scripted__echo", arguments: "{}" }),
    });
    const trace = await callTrace();
    expect({ tree: trace.tree, callIds: trace.callIds }).toEqual({
      tree: expectedTree(null),
      callIds: ["rest-untraced-1"],
    });
  });
});

describe("who asked", () => {
  it("names the principal as enduser.id on the gateway's span and the dispatcher's, through MCP and REST", async () => {
    const guarded = await stack.gateway({
      principals: [{ name: "carol", role: "caller", token: "carol-traced-token-0123" }],
    });
    const headers = { authorization: "Bearer carol-traced-token-0123" };
    const viaMcp = await mcpClient(guarded, { headers });
    clients.push(viaMcp);
    await viaMcp.callTool({ name: "scripted__echo", arguments: {} });
    const mcpTrace = await callTrace();
    exporter.reset();
    await fetch(`${guarded.url}/v1/calls`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ callId: "rest-principal-1", tool: "mcp__scripted__echo", arguments: "{}" }),
    });
    const restTrace = await callTrace();
    const dispatcherSpan = async (traceId: string) =>
      eventually("the dispatcher's call span", () =>
        receiver.spans.find((span) => span.traceId === traceId && span.name === "toolbus.dispatch.call"),
      );
    expect({
      mcp: mcpTrace.root.attributes["enduser.id"],
      mcpDispatcher: (await dispatcherSpan(mcpTrace.traceId)).attributes["enduser.id"],
      rest: restTrace.root.attributes["enduser.id"],
      restDispatcher: (await dispatcherSpan(restTrace.traceId)).attributes["enduser.id"],
    }).toEqual({ mcp: "carol", mcpDispatcher: "carol", rest: "carol", restDispatcher: "carol" });
  });
});

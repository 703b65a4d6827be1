// Every service's metrics, exported over OTLP/HTTP JSON to a receiver on 127.0.0.1 while real
// calls go through the real services (one process, one bus each, a real MCP server behind the
// catalog). Exports happen when the test flushes, so each value read is exact. This file runs
// in its own worker: the OTEL_* variables and the global meter provider stay here.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { startTelemetry } from "@toolbus/bus";
import { ApprovalResolveResultSchema, ApprovalsListResultSchema } from "@toolbus/protocol";
import { flushTelemetry, type OtlpReceiver, startOtlpReceiver } from "@toolbus/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Services, startServices, waitFor } from "./support/services.js";

const SERVICE = "toolbus-metrics-test";
const OTEL_VARIABLES = {
  OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
  // Far longer than the test: every export is one the test asked for.
  OTEL_METRIC_EXPORT_INTERVAL: "600000",
  OTEL_TRACES_EXPORTER: "none",
};

let receiver: OtlpReceiver;
let stopTelemetry: () => Promise<void>;
let s: Services;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  Object.assign(process.env, OTEL_VARIABLES, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint });
  // Before the services start: their instruments are created on this provider.
  stopTelemetry = await startTelemetry({ serviceName: SERVICE });
  s = await startServices({
    label: "metrics",
    script: {
      tools: [{ name: "echo" }, { name: "guarded" }, { name: "crash", behavior: { kind: "crash" } }],
    },
    promptTools: ["guarded"],
  });
});

afterAll(async () => {
  await s?.stop();
  await stopTelemetry?.();
  for (const name of [...Object.keys(OTEL_VARIABLES), "OTEL_EXPORTER_OTLP_ENDPOINT"])
    delete process.env[name];
  await receiver?.close();
});

type Attributes = Record<string, string | number | boolean>;

/** Exports now, then the value (sum, gauge) or sample count (histogram) of one series; 0 when never recorded. */
async function read(metric: string, attributes: Attributes = {}): Promise<number> {
  await flushTelemetry();
  const found = receiver.latest(metric, attributes);
  if (found.length > 1)
    throw new Error(`${metric} ${JSON.stringify(attributes)} matches ${found.length} series`);
  const point = found[0];
  return point === undefined ? 0 : (point.value ?? point.count ?? 0);
}

/** What `read` gives for each series now, so a test can assert on what it changed. */
async function snapshot(series: Record<string, [string, Attributes?]>): Promise<Record<string, number>> {
  const values: Record<string, number> = {};
  for (const [key, [metric, attributes]] of Object.entries(series))
    values[key] = await read(metric, attributes);
  return values;
}

async function changes(
  series: Record<string, [string, Attributes?]>,
  act: () => Promise<void>,
): Promise<Record<string, number>> {
  const before = await snapshot(series);
  await act();
  const after = await snapshot(series);
  return Object.fromEntries(Object.entries(after).map(([key, value]) => [key, value - (before[key] ?? 0)]));
}

const SCRIPTED = { "mcp.server": "scripted" };

/** A memory citation naming `ids`, as a model writes one (docs/reference-behavior.md §9). */
function citation(ids: readonly string[]): string {
  return ["<oai-mem-citation>", "<citation_entries>", "MEMORY.md:1-2|note=[x]", "</citation_entries>"]
    .concat("<rollout_ids>", ...ids, "</rollout_ids>", "</oai-mem-citation>")
    .join("\n");
}

describe("metrics exported over OTLP", () => {
  it("counts tool calls made through the gateway at every hop, each call exactly once", async () => {
    let mcp: Client | undefined;
    const series = {
      dispatcherCalls: ["toolbus.dispatcher.calls", { ...SCRIPTED, "toolbus.call.status": "completed" }],
      dispatcherDurations: [
        "toolbus.dispatcher.call.duration",
        { ...SCRIPTED, "toolbus.call.status": "completed" },
      ],
      edgeMcp: [
        "toolbus.gateway.tool_calls",
        { "toolbus.gateway.api": "mcp", "toolbus.call.status": "completed" },
      ],
      edgeRest: [
        "toolbus.gateway.tool_calls",
        { "toolbus.gateway.api": "rest", "toolbus.call.status": "completed" },
      ],
      connectorCalls: [
        "toolbus.catalog.connector.call.duration",
        { ...SCRIPTED, "toolbus.call.outcome": "ok" },
      ],
      dispatchRequests: [
        "toolbus.bus.requests",
        { "messaging.destination.name": s.subjects.dispatchCall, "toolbus.outcome": "ok" },
      ],
      restRequests: [
        "toolbus.gateway.http.requests",
        { "http.request.method": "POST", "http.route": "/v1/calls", "http.response.status_code": 200 },
      ],
      decisions: [
        "toolbus.approvals.decisions",
        { "toolbus.approval.decision": "approved", "toolbus.approval.source": "mode" },
      ],
    } satisfies Record<string, [string, Attributes]>;
    const changed = await changes(series, async () => {
      mcp = await s.mcpClient();
      const { tools } = await mcp.listTools();
      const echo = tools.find((tool) => tool.name.endsWith("echo"))?.name ?? "no echo tool listed";
      for (const text of ["one", "two", "three"]) {
        const result = await mcp.callTool({ name: echo, arguments: { text } });
        expect(result.isError).toBeFalsy();
      }
      const response = await fetch(`${s.gateway.url}/v1/calls`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ callId: "rest-1", tool: "mcp__scripted__echo", arguments: "{}" }),
      });
      expect({
        status: response.status,
        body: ((await response.json()) as { status: string }).status,
      }).toEqual({
        status: 200,
        body: "completed",
      });
    });
    expect(changed).toEqual({
      dispatcherCalls: 4,
      dispatcherDurations: 4,
      edgeMcp: 3,
      edgeRest: 1,
      connectorCalls: 4,
      dispatchRequests: 4,
      restRequests: 1,
      decisions: 4,
    });
    const duration = receiver.only("toolbus.dispatcher.call.duration", series.dispatcherDurations[1]);
    expect({ service: duration.service, unit: duration.unit }).toEqual({ service: SERVICE, unit: "s" });
    expect(duration.sum).toBeGreaterThan(0);
    if (mcp) await s.closeMcpClient(mcp);
  });

  it("reports the MCP sessions the gateway holds, and HTTP requests by route and status", async () => {
    const sessions = () => read("toolbus.gateway.sessions");
    const before = await sessions();
    const mcp = await s.mcpClient();
    const open = await sessions();
    await s.closeMcpClient(mcp);
    await waitFor("the gateway to drop the session", () => s.gateway.sessions() === before);
    const closed = await sessions();
    expect({ before, open, closed }).toEqual({ before, open: before + 1, closed: before });

    const requests = {
      health: [
        "toolbus.gateway.http.requests",
        { "http.route": "/healthz", "http.response.status_code": 200 },
      ],
      missing: [
        "toolbus.gateway.http.requests",
        { "http.route": "unmatched", "http.response.status_code": 404 },
      ],
    } satisfies Record<string, [string, Attributes]>;
    const changed = await changes(requests, async () => {
      for (const path of ["/healthz", "/healthz", "/no-such-page"])
        await (await fetch(`${s.gateway.url}${path}`)).text();
    });
    expect(changed).toEqual({ health: 2, missing: 1 });
  });

  it("shows an approval pending while a human is asked, then the decision and how long it waited", async () => {
    const series = {
      decisions: [
        "toolbus.approvals.decisions",
        { "toolbus.approval.decision": "approved", "toolbus.approval.source": "human" },
      ],
      waits: [
        "toolbus.approvals.wait.duration",
        { "toolbus.approval.decision": "approved", "toolbus.approval.resolved_by": "user" },
      ],
    } satisfies Record<string, [string, Attributes]>;
    const pendingBefore = await read("toolbus.approvals.pending");
    let pendingWhileAsked = -1;
    const changed = await changes(series, async () => {
      const call = s.dispatch({ tool: "mcp__scripted__guarded", arguments: "{}" });
      let requestId = "";
      await waitFor("the approval request", async () => {
        const { pending } = await s.client.request(s.subjects.approvalsList, {}, ApprovalsListResultSchema);
        requestId = pending[0]?.requestId ?? "";
        return requestId !== "";
      });
      pendingWhileAsked = await read("toolbus.approvals.pending");
      await s.client.request(
        s.subjects.approvalsResolve,
        { requestId, choice: "allow" },
        ApprovalResolveResultSchema,
      );
      expect((await call).status).toBe("completed");
    });
    expect({
      pendingBefore,
      pendingWhileAsked,
      after: await read("toolbus.approvals.pending"),
      ...changed,
    }).toEqual({ pendingBefore: 0, pendingWhileAsked: 1, after: 0, decisions: 1, waits: 1 });
  });

  it("counts a call refused as stale, as a skipped call and a stale rejection", async () => {
    const series = {
      stale: ["toolbus.dispatcher.stale_rejections", { ...SCRIPTED, "toolbus.rejected_by": "dispatcher" }],
      skipped: ["toolbus.dispatcher.calls", { ...SCRIPTED, "toolbus.call.status": "skipped" }],
    } satisfies Record<string, [string, Attributes]>;
    const changed = await changes(series, async () => {
      const reply = await s.dispatch({
        tool: "mcp__scripted__echo",
        arguments: "{}",
        // A fingerprint the tool never had.
        toolFingerprint: "0".repeat(64),
      });
      expect(reply.status).toBe("skipped");
    });
    expect(changed).toEqual({ stale: 1, skipped: 1 });
  });

  it("reports the catalog revision stored in KV and the servers by status", async () => {
    const stream = await (await s.client.jsm()).streams.info(`KV_${s.subjects.kv.catalog}`);
    const statuses = {} as Record<string, number>;
    for (const status of ["starting", "ready", "failed", "cancelled", "disabled"]) {
      statuses[status] = await read("toolbus.catalog.servers", { "toolbus.server.status": status });
    }
    expect({ revision: await read("toolbus.catalog.revision"), statuses }).toEqual({
      revision: stream.state.last_seq,
      statuses: { starting: 0, ready: 1, failed: 0, cancelled: 0, disabled: 0 },
    });
  });

  it("counts memory messages ingested, the citations they add, the ones parked, and their lag", async () => {
    const rollout = "019c6e27-e55b-73d1-87d8-4e01f1f75043";
    const unknown = "019c6e27-e55b-73d1-87d8-4e01f1f7504f";
    await s.db.query(
      `INSERT INTO stage1_outputs (thread_id, source_updated_at, raw_memory, rollout_summary, generated_at)
       VALUES ($1, 100, 'raw', 'summary', 100)`,
      [rollout],
    );
    const series = {
      counted: ["toolbus.memory.messages.ingested", { "toolbus.memory.result": "counted" }],
      duplicate: ["toolbus.memory.messages.ingested", { "toolbus.memory.result": "duplicate" }],
      citations: ["toolbus.memory.citations.counted"],
      parked: ["toolbus.memory.messages.parked"],
      lag: ["toolbus.memory.ingest.lag"],
    } satisfies Record<string, [string, Attributes?]>;
    const changed = await changes(series, async () => {
      const js = s.client.js();
      const messages = [
        { messageId: "m1", text: `The answer.\n${citation([rollout, rollout])}` },
        { messageId: "m2", text: `${citation([rollout])} and ${citation([unknown])}` },
        { messageId: "m1", text: `The answer.\n${citation([rollout, rollout])}` },
      ];
      for (const message of messages) await js.publish(s.subjects.memoryMessage, JSON.stringify(message));
      await js.publish(s.subjects.memoryMessage, "not json");
      await waitFor("the memory service to settle 4 messages", () => {
        const stats = s.memory.stats();
        return stats.counted + stats.duplicates + stats.parked === 4;
      });
    });
    // m1 (which names it twice: one distinct id) and m2 each cite the known rollout once: 2;
    // the unknown one adds to nothing.
    expect(changed).toEqual({ counted: 2, duplicate: 1, citations: 2, parked: 1, lag: 4 });
  });

  it("counts a connector restart after its server crashed, and the server is ready again", async () => {
    const restarts = ["toolbus.catalog.connector.restarts", SCRIPTED] satisfies [string, Attributes];
    const changed = await changes({ restarts }, async () => {
      const reply = await s.dispatch({ tool: "mcp__scripted__crash", arguments: "{}" });
      expect(reply.status).toBe("failed");
      await waitFor("the connector to restart the server", async () => (await read(...restarts)) > 0);
      await waitFor(
        "the server to be ready again",
        () => s.catalog.connectors.get("scripted")?.status === "ready",
      );
    });
    expect({
      ...changed,
      ready: await read("toolbus.catalog.servers", { "toolbus.server.status": "ready" }),
    }).toEqual({ restarts: 1, ready: 1 });
  });
});

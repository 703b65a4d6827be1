/**
 * Tasks (the `io.modelcontextprotocol/tasks` extension of MCP 2026-07-28), every service real:
 * a client that declares the extension gets a task's handle for a call that runs long or waits
 * for a human, and `tasks/get`, `tasks/update` and `tasks/cancel` work on another gateway
 * replica; a task is its maker's alone; a client that does not declare tasks waits as before.
 */
import type { GatewayService } from "@toolbus/gateway";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Services, startServices, waitFor } from "./support/services.js";

const MODERN = "2026-07-28";
const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} } };
const TOKENS = { alice: "alice-calls-and-approves", bob: "bob-calls-and-approves" };
let s: Services;
let other: GatewayService;

/** One 2026-07-28 request by hand, as `token`: its JSON-RPC answer. */
async function post(
  gateway: GatewayService,
  method: string,
  params: Record<string, unknown>,
  options: { token?: string; capabilities?: Record<string, unknown> } = {},
): Promise<{ result?: Record<string, unknown>; error?: { code: number; message: string } }> {
  const response = await fetch(`${gateway.url}/mcp`, {
    method: "POST",
    headers: {
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
      authorization: `Bearer ${options.token ?? TOKENS.alice}`,
      "mcp-protocol-version": MODERN,
      "mcp-method": method,
      // The header names what the body does: the tool, or the task.
      ...(method === "tools/call" ? { "mcp-name": String(params.name) } : {}),
      ...(method.startsWith("tasks/") ? { "mcp-name": String(params.taskId) } : {}),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": MODERN,
          "io.modelcontextprotocol/clientInfo": { name: "tasks-test", version: "1" },
          "io.modelcontextprotocol/clientCapabilities": options.capabilities ?? {
            ...TASKS,
            elicitation: { form: {} },
          },
        },
      },
    }),
  });
  const text = await response.text();
  const data = response.headers.get("content-type")?.includes("text/event-stream")
    ? text
        .split("\n")
        .filter((line) => line.startsWith("data: "))
        .at(-1)
        ?.slice("data: ".length)
    : text;
  return JSON.parse(data ?? "{}") as { result?: Record<string, unknown> };
}

/** Polls `tasks/get` on `gateway` until the task's status is `status`; its last answer. */
async function taskReaching(gateway: GatewayService, taskId: string, status: string) {
  let last: Record<string, unknown> | undefined;
  await waitFor(`task ${taskId} to be ${status}`, async () => {
    last = (await post(gateway, "tasks/get", { taskId })).result;
    return last?.status === status;
  });
  return last as Record<string, unknown>;
}

beforeAll(async () => {
  s = await startServices({
    label: "tasks",
    script: {
      tools: [
        { name: "slow", behavior: { kind: "delay", ms: 1_500 } },
        { name: "guarded" },
        { name: "hang", behavior: { kind: "hang" } },
        {
          name: "ask",
          behavior: {
            kind: "elicit",
            message: "Which shelf?",
            requestedSchema: { type: "object", properties: { shelf: { type: "string" } } },
          },
        },
      ],
    },
    promptTools: ["guarded"],
    principals: [
      { name: "alice", role: "admin", token: TOKENS.alice },
      { name: "bob", role: "admin", token: TOKENS.bob },
    ],
    selfApprove: true,
    gateway: { taskAfterMs: 300 },
  });
  other = await s.anotherGateway({ taskAfterMs: 300 });
}, 120_000);

afterAll(async () => {
  await s?.stop();
});

describe("a client that declares tasks", () => {
  it("gets a working task for a call that runs long, and its result from another replica", async () => {
    const created = (await post(s.gateway, "tools/call", { name: "scripted__slow", arguments: { n: 1 } }))
      .result as Record<string, unknown>;
    expect({ resultType: created.resultType, status: created.status, ttlMs: created.ttlMs }).toEqual({
      resultType: "task",
      status: "working",
      ttlMs: 30 * 60_000,
    });
    const done = await taskReaching(other, String(created.taskId), "completed");
    expect(done.result).toEqual({ content: [{ type: "text", text: JSON.stringify({ n: 1 }) }] });
  });

  it("is asked the call's approval by tasks/get, answers it with tasks/update on another replica, and the call runs", async () => {
    const created = (await post(s.gateway, "tools/call", { name: "scripted__guarded", arguments: { n: 2 } }))
      .result as Record<string, unknown>;
    const taskId = String(created.taskId);
    const asked = await taskReaching(other, taskId, "input_required");
    const inputs = asked.inputRequests as Record<string, { method: string; params: { message: string } }>;
    expect([created.status, inputs.approval?.method, inputs.approval?.params.message]).toEqual([
      "input_required",
      "elicitation/create",
      'Allow the scripted MCP server to run tool "guarded"?',
    ]);
    const updated = await post(other, "tasks/update", {
      taskId,
      inputResponses: { approval: { action: "accept" } },
    });
    expect(updated.result?.resultType).toBe("complete");
    const done = await taskReaching(s.gateway, taskId, "completed");
    const { rows } = await s.db.query<{ resolved_by: string }>(
      "SELECT resolved_by FROM approval_requests WHERE call_id = $1",
      [(await s.upstream.calls()).at(-1)?._meta?.callId],
    );
    expect({ result: done.result, by: rows.map((row) => row.resolved_by) }).toEqual({
      result: { content: [{ type: "text", text: JSON.stringify({ n: 2 }) }] },
      by: ["alice"],
    });
  });

  it("is asked its server's question by tasks/get, and its answer reaches the server", async () => {
    const created = (await post(s.gateway, "tools/call", { name: "scripted__ask", arguments: {} }))
      .result as Record<string, unknown>;
    const taskId = String(created.taskId);
    const asked = await taskReaching(other, taskId, "input_required");
    const inputs = asked.inputRequests as Record<string, { params: { message: string } }>;
    expect(inputs.elicitation?.params.message).toBe("Which shelf?");
    await post(other, "tasks/update", {
      taskId,
      inputResponses: { elicitation: { action: "accept", content: { shelf: "top" } } },
    });
    const done = await taskReaching(other, taskId, "completed");
    expect(done.result).toEqual({
      content: [{ type: "text", text: JSON.stringify({ action: "accept", content: { shelf: "top" } }) }],
    });
  });

  it("cancels a task, and its server is told", async () => {
    const created = (await post(s.gateway, "tools/call", { name: "scripted__hang", arguments: {} }))
      .result as Record<string, unknown>;
    const taskId = String(created.taskId);
    await post(other, "tasks/cancel", { taskId });
    const cancelled = await taskReaching(other, taskId, "cancelled");
    await waitFor("the server's cancellation", async () =>
      (await s.upstream.cancellations()).some((line) => line.tool === "hang"),
    );
    expect(cancelled.status).toBe("cancelled");
  });

  it("keeps a task its maker's: another principal is told it does not exist", async () => {
    const created = (await post(s.gateway, "tools/call", { name: "scripted__slow", arguments: { n: 3 } }))
      .result as Record<string, unknown>;
    const taskId = String(created.taskId);
    const seen = await post(other, "tasks/get", { taskId }, { token: TOKENS.bob });
    const cancelled = await post(other, "tasks/cancel", { taskId }, { token: TOKENS.bob });
    expect([seen.error?.code, cancelled.error?.code]).toEqual([-32602, -32602]);
    expect(seen.error?.message).toContain(`no task ${taskId} of yours`);
    // Untouched by the attempt: it completes for its maker.
    await taskReaching(s.gateway, taskId, "completed");
  });
});

it("a client that does not declare tasks waits for the result, as before", async () => {
  const answered = await post(
    s.gateway,
    "tools/call",
    { name: "scripted__slow", arguments: { n: 4 } },
    { capabilities: {} },
  );
  expect(answered.result?.content).toEqual([{ type: "text", text: JSON.stringify({ n: 4 }) }]);
});

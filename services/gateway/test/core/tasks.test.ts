import type { ApprovalRequest, ToolCallReply } from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import { belongsTo } from "../../src/core/held-calls.js";
import { declaresTasks, type TaskRecord, taskHandle, taskResult, taskState } from "../../src/core/tasks.js";

const record: TaskRecord = {
  principal: "alice",
  view: "docs",
  call: {
    request: { callId: "gw-1", tool: "docs__search", arguments: "{}" },
    server: "docs",
    tool: "search",
    exposedName: "docs__search",
    traceContext: {},
  },
  createdAt: "2026-12-05T10:00:00.000Z",
  lastUpdatedAt: "2026-12-05T10:00:01.000Z",
};

const reply: ToolCallReply = {
  callId: "gw-1",
  status: "completed",
  output: { success: true, body: "Wall time: 0.0010 seconds\nOutput:\nfound" },
  result: { content: [{ type: "text", text: "found" }] },
  durationMs: 1,
  wallTimeMs: 1,
  catalogRevision: 1,
};

const approval = {
  requestId: "mcp_tool_call_approval_gw-1",
  callId: "gw-1",
  server: "docs",
  tool: "search",
  hookName: "mcp__docs__search",
  header: "Approve app tool call?",
  question: 'Allow the docs MCP server to run tool "search"?',
  options: [{ id: "allow", label: "Allow", description: "Run the tool and continue." }],
  arguments: {},
  createdAt: "2026-12-05T10:00:00.000Z",
  expiresAt: "2026-12-05T10:10:00.000Z",
} as ApprovalRequest;

describe("a task's state, from its call's", () => {
  it("is completed with the call's MCP result once the call has its reply", () => {
    expect(taskState(record, { reply })).toEqual({
      status: "completed",
      result: { content: [{ type: "text", text: "found" }] },
    });
  });

  it("asks the approval the client may answer, and the server's questions the task keeps, under their keys", () => {
    const shelf = { method: "elicitation/create", params: { message: "Which shelf?" } };
    const roots = { method: "roots/list" };
    const question = { kind: "input" as const, relayId: "r1", requests: { shelf, where: roots } };
    const state = taskState({ ...record, question }, { approval });
    expect(state.status).toBe("input_required");
    expect(state.status === "input_required" && Object.keys(state.inputRequests)).toEqual([
      "approval",
      "shelf",
      "where",
    ]);
    expect(state.status === "input_required" && state.inputRequests.shelf).toEqual(shelf);
  });

  it("is working while the call runs and asks nothing", () => {
    expect(taskState(record, {})).toEqual({ status: "working" });
  });

  it("stays cancelled once its client cancelled it, whatever the call answered on the way out", () => {
    expect(taskState({ ...record, cancelled: true }, { reply })).toEqual({ status: "cancelled" });
  });
});

describe("what a task's client is told", () => {
  it("names the task, its times, how long it is kept and how often to poll", () => {
    expect(taskHandle("t1", record, 1_800_000, "working")).toEqual({
      resultType: "task",
      taskId: "t1",
      createdAt: record.createdAt,
      lastUpdatedAt: record.lastUpdatedAt,
      ttlMs: 1_800_000,
      pollIntervalMs: 1_000,
      status: "working",
    });
    expect(taskResult("t1", record, 1_800_000, { status: "working" }).resultType).toBe("complete");
  });
});

describe("who a task or a held question belongs to", () => {
  it("is its principal at its endpoint only", () => {
    expect([
      belongsTo(record, { principal: "alice", view: "docs" }),
      belongsTo(record, { principal: "bob", view: "docs" }),
      belongsTo(record, { principal: "alice", view: undefined }),
    ]).toEqual([true, false, false]);
  });
});

describe("a client that takes tasks", () => {
  it("declares the extension among its capabilities' extensions", () => {
    expect([
      declaresTasks({ extensions: { "io.modelcontextprotocol/tasks": {} } }),
      declaresTasks({ extensions: { "io.modelcontextprotocol/tasks": true } }),
      declaresTasks({ extensions: {} }),
      declaresTasks({}),
    ]).toEqual([true, false, false, false]);
  });
});

import type { ApprovalChoice, ApprovalRequest } from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import { createPaint } from "../../src/core/ansi.js";
import { offeredChoices, parseApprovalChoice, toRequestId } from "../../src/core/approval-choice.js";
import { ApprovalQueue } from "../../src/core/approval-queue.js";
import { approvalRows, choiceMenu, renderApprovalPrompt } from "../../src/core/approval-view.js";
import { approvalsAction } from "../../src/core/approvals-args.js";

function request(callId: string, createdAt = "2030-01-01T00:00:00.000Z"): ApprovalRequest {
  return {
    requestId: `mcp_tool_call_approval_${callId}`,
    callId,
    server: "files",
    tool: "delete",
    hookName: "mcp__files__delete",
    header: "Approve app tool call?",
    question: 'Allow the files MCP server to run tool "delete"?',
    options: [
      { id: "allow", label: "Allow", description: "" },
      { id: "allow_always", label: "Allow and don't ask me again", description: "" },
      { id: "cancel", label: "Cancel", description: "" },
    ],
    arguments: { path: "/tmp/x" },
    createdAt,
    expiresAt: "2030-01-01T00:10:00.000Z",
  };
}

const offered: ApprovalChoice[] = ["allow", "allow_always", "decline", "cancel"];

describe("parseApprovalChoice", () => {
  it.each([
    ["a", "allow"],
    ["Allow", "allow"],
    [" y ", "allow"],
    ["p", "allow_always"],
    ["always", "allow_always"],
    ["allow-always", "allow_always"],
    ["d", "decline"],
    ["deny", "decline"],
    ["c", "cancel"],
  ])("reads %j as %s", (input, choice) => {
    expect(parseApprovalChoice(input, offered)).toEqual({ ok: true, value: choice });
  });

  it.each([
    [
      "s",
      "allow_session is not offered for this request; answer one of a (allow), p (allow_always), d (decline), c (cancel)",
    ],
    ["maybe", '"maybe" is not a choice; answer one of a (allow), p (allow_always), d (decline), c (cancel)'],
  ])("refuses %j", (input, message) => {
    expect(parseApprovalChoice(input, offered)).toEqual({ ok: false, message });
  });
});

describe("offeredChoices", () => {
  it("offers the request's options plus decline and cancel, in key order", () => {
    expect(offeredChoices(request("c1"))).toEqual(offered);
  });
});

describe("toRequestId", () => {
  it.each([
    ["c1", "mcp_tool_call_approval_c1"],
    ["mcp_tool_call_approval_c1", "mcp_tool_call_approval_c1"],
  ])("names %s as %s", (id, requestId) => {
    expect(toRequestId(id)).toBe(requestId);
  });
});

describe("approvalsAction", () => {
  it.each([
    [[], false, { ok: true, value: { kind: "list" } }],
    [[], true, { ok: true, value: { kind: "watch" } }],
    [
      ["answer", "c1", "allow_session"],
      false,
      {
        ok: true,
        value: { kind: "answer", requestId: "mcp_tool_call_approval_c1", choice: "allow_session" },
      },
    ],
    [
      ["answer", "c1"],
      false,
      {
        ok: false,
        message:
          "toolbus approvals answer needs <requestId> <choice> (allow, allow_session, allow_always, decline, cancel)",
      },
    ],
    [["answer", "c1", "allow"], true, { ok: false, message: "--watch cannot be combined with answer" }],
    [
      ["answer", "c1", "allow", "x"],
      false,
      { ok: false, message: 'toolbus approvals answer takes two arguments; unexpected "x"' },
    ],
    [
      ["approve"],
      false,
      {
        ok: false,
        message: 'unknown approvals action "approve"; use `toolbus approvals answer <requestId> <choice>`',
      },
    ],
  ])("reads %j (watch %s) as %j", (positionals, watch, action) => {
    expect(approvalsAction(positionals, watch)).toEqual(action);
  });
});

describe("ApprovalQueue", () => {
  it("gives the oldest request first, each once, and never one already answered", () => {
    const queue = new ApprovalQueue();
    const added = [
      queue.add(request("late", "2030-01-01T00:05:00.000Z")),
      queue.add(request("early", "2030-01-01T00:01:00.000Z")),
      queue.add(request("early", "2030-01-01T00:01:00.000Z")),
    ];
    const first = queue.next()?.callId;
    queue.remove("mcp_tool_call_approval_early");
    const readded = queue.add(request("early"));
    expect({ added, first, readded, next: queue.next()?.callId, size: queue.size }).toEqual({
      added: [true, true, false],
      first: "early",
      readded: false,
      next: "late",
      size: 1,
    });
  });
});

describe("approval views", () => {
  const now = new Date("2030-01-01T00:00:02.000Z");

  it("shows one table row per request", () => {
    expect(approvalRows([request("c1")], now)).toEqual([
      ["mcp_tool_call_approval_c1", "files", "delete", '{"path":"/tmp/x"}', "in 9m58s"],
    ]);
  });

  it("prompts with the header, question, arguments, expiry and the offered choices", () => {
    expect(renderApprovalPrompt(request("c1"), offered, now, createPaint(false))).toEqual([
      "Approve app tool call?",
      'Allow the files MCP server to run tool "delete"?',
      '  arguments: {"path":"/tmp/x"}',
      "  request:   mcp_tool_call_approval_c1  (expires in 9m58s)",
      "  [a] Allow  [p] Allow and don't ask me again  [d] Decline  [c] Cancel",
    ]);
  });

  it("labels a choice the request does not list with the CLI's own words", () => {
    expect(choiceMenu({ options: [] }, ["allow_session", "decline"], createPaint(false))).toBe(
      "[s] Allow for this session  [d] Decline",
    );
  });
});

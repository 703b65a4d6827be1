import { describe, expect, it } from "vitest";
import {
  approvalOptions,
  approvalQuestion,
  buildApprovalRequest,
  collapseTrailingQuestionMarks,
} from "../src/approval-prompt.js";
import type { ApprovalMode } from "../src/types.js";

const allow = { id: "allow", label: "Allow", description: "Run the tool and continue." };
const allowSession = {
  id: "allow_session",
  label: "Allow for this session",
  description: "Run the tool and remember this choice for this session.",
};
const allowAlways = {
  id: "allow_always",
  label: "Allow and don't ask me again",
  description: "Run the tool and remember this choice for future tool calls.",
};
const cancel = { id: "cancel", label: "Cancel", description: "Cancel this tool call." };

describe("the question put to a human", () => {
  it.each([
    {
      server: "docs",
      tool: "search",
      connector: undefined,
      question: 'Allow the docs MCP server to run tool "search"?',
    },
    {
      server: "docs",
      tool: "search",
      connector: "  Google Docs ",
      question: 'Allow Google Docs to run tool "search"?',
    },
    {
      server: "docs",
      tool: "search",
      connector: "   ",
      question: 'Allow the docs MCP server to run tool "search"?',
    },
    {
      server: "gh",
      tool: "what?",
      connector: undefined,
      question: 'Allow the gh MCP server to run tool "what?"?',
    },
  ])("[35] asks $question", ({ server, tool, connector, question }) => {
    expect(approvalQuestion(server, tool, connector)).toBe(question);
  });

  it.each([
    { text: "Run it???", collapsed: "Run it?" },
    { text: "Run it", collapsed: "Run it?" },
    { text: "Run it?", collapsed: "Run it?" },
    { text: "Why? Run it??", collapsed: "Why? Run it?" },
  ])("collapses the trailing question marks of $text", ({ text, collapsed }) => {
    expect(collapseTrailingQuestionMarks(text)).toBe(collapsed);
  });
});

describe("[36] the options offered", () => {
  it.each<{ name: string; mode: ApprovalMode; session: boolean; persistent: boolean; options: object[] }>([
    {
      name: "auto with both keys offers all four in order",
      mode: "auto",
      session: true,
      persistent: true,
      options: [allow, allowSession, allowAlways, cancel],
    },
    {
      name: "auto outside a thread offers no session option",
      mode: "auto",
      session: false,
      persistent: true,
      options: [allow, allowAlways, cancel],
    },
    {
      name: "auto without a persistent key offers no always option",
      mode: "auto",
      session: true,
      persistent: false,
      options: [allow, allowSession, cancel],
    },
    {
      name: "prompt offers allow and cancel only",
      mode: "prompt",
      session: true,
      persistent: true,
      options: [allow, cancel],
    },
    {
      name: "writes offers allow and cancel only",
      mode: "writes",
      session: true,
      persistent: true,
      options: [allow, cancel],
    },
  ])("$name", ({ mode, session, persistent, options }) => {
    expect(approvalOptions(mode, session, persistent)).toEqual(options);
  });
});

const DIGEST = "d".repeat(64);

describe("the approval request", () => {
  it("[35][37] carries the id, header, question, options, arguments and its expiry", () => {
    const request = buildApprovalRequest({
      callId: "call-7",
      threadId: "t-1",
      server: "docs",
      tool: "delete_page",
      hookName: "mcp__docs__delete_page",
      arguments: { id: 3 },
      annotations: { destructiveHint: true },
      title: "Delete page",
      callDigest: DIGEST,
      mode: "auto",
      hasSessionKey: true,
      hasPersistentKey: true,
      now: Date.parse("2026-01-02T03:04:05.000Z"),
      timeoutMs: 90_000,
    });
    expect(request).toStrictEqual({
      requestId: "mcp_tool_call_approval_call-7",
      callId: "call-7",
      threadId: "t-1",
      server: "docs",
      tool: "delete_page",
      hookName: "mcp__docs__delete_page",
      header: "Approve app tool call?",
      question: 'Allow the docs MCP server to run tool "delete_page"?',
      options: [allow, allowSession, allowAlways, cancel],
      arguments: { id: 3 },
      annotations: { destructiveHint: true },
      title: "Delete page",
      callDigest: DIGEST,
      createdAt: "2026-01-02T03:04:05.000Z",
      expiresAt: "2026-01-02T03:05:35.000Z",
    });
  });

  it("leaves out what the call does not have", () => {
    const request = buildApprovalRequest({
      callId: "c",
      server: "docs",
      tool: "t",
      hookName: "mcp__docs__t",
      arguments: null,
      callDigest: DIGEST,
      mode: "prompt",
      hasSessionKey: false,
      hasPersistentKey: false,
      now: 0,
      timeoutMs: 1000,
    });
    expect(request).toStrictEqual({
      requestId: "mcp_tool_call_approval_c",
      callId: "c",
      server: "docs",
      tool: "t",
      hookName: "mcp__docs__t",
      header: "Approve app tool call?",
      question: 'Allow the docs MCP server to run tool "t"?',
      options: [allow, cancel],
      arguments: null,
      callDigest: DIGEST,
      createdAt: "1970-01-01T00:00:00.000Z",
      expiresAt: "1970-01-01T00:00:01.000Z",
    });
  });
});

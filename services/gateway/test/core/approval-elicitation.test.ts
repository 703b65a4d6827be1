import type { ApprovalChoice, ApprovalRequest } from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import {
  approvalChoice,
  approvalElicitation,
  type ElicitAnswer,
} from "../../src/core/approval-elicitation.js";

const ALLOW = { id: "allow", label: "Allow", description: "Run the tool and continue." } as const;
const SESSION = {
  id: "allow_session",
  label: "Allow for this session",
  description: "Run the tool and remember this choice for this session.",
} as const;
const ALWAYS = {
  id: "allow_always",
  label: "Allow and don't ask me again",
  description: "Run the tool and remember this choice for future tool calls.",
} as const;
const CANCEL = { id: "cancel", label: "Cancel", description: "Cancel this tool call." } as const;

function request(options: ApprovalRequest["options"], extra: Partial<ApprovalRequest> = {}): ApprovalRequest {
  return {
    requestId: "mcp_tool_call_approval_c1",
    callId: "c1",
    server: "docs",
    tool: "search",
    hookName: "mcp__docs__search",
    header: "Approve app tool call?",
    question: 'Allow the docs MCP server to run tool "search"?',
    options,
    arguments: { query: "q", limit: 3 },
    createdAt: "2026-01-01T00:00:00.000Z",
    expiresAt: "2026-01-01T00:10:00.000Z",
    ...extra,
  };
}

describe("approval elicitation", () => {
  it("[37] asks with an empty form and the reference's _meta: kind, persist, title, description and sorted params", () => {
    expect(
      approvalElicitation(
        request([ALLOW, SESSION, ALWAYS, CANCEL], { title: "Search", description: "Searches the docs." }),
      ),
    ).toEqual({
      mode: "form",
      message: 'Allow the docs MCP server to run tool "search"?',
      requestedSchema: { type: "object", properties: {} },
      _meta: {
        codex_approval_kind: "mcp_tool_call",
        persist: ["session", "always"],
        tool_title: "Search",
        tool_description: "Searches the docs.",
        tool_params: { query: "q", limit: 3 },
        tool_params_display: [
          { name: "limit", value: 3, display_name: "limit" },
          { name: "query", value: "q", display_name: "query" },
        ],
      },
    });
  });

  it.each<[string, ApprovalRequest["options"], unknown]>([
    ["persist is `session` when only the session choice is offered", [ALLOW, SESSION, CANCEL], "session"],
    ["persist is `always` when only the always choice is offered", [ALLOW, ALWAYS, CANCEL], "always"],
    ["persist is absent when nothing is remembered", [ALLOW, CANCEL], undefined],
  ])("[37] %s", (_rule, options, persist) => {
    expect(approvalElicitation(request(options))._meta.persist).toEqual(persist);
  });

  it("carries only the kind when the request has no options", () => {
    expect(approvalElicitation(request([]))._meta).toEqual({ codex_approval_kind: "mcp_tool_call" });
  });

  it.each<[string, ElicitAnswer, ApprovalRequest["options"], ApprovalChoice]>([
    ["decline declines", { action: "decline" }, [ALLOW, SESSION, CANCEL], "decline"],
    ["cancel cancels", { action: "cancel" }, [ALLOW, SESSION, CANCEL], "cancel"],
    ["accept without content allows once", { action: "accept" }, [ALLOW, SESSION, CANCEL], "allow"],
    [
      "accept with persist session allows for the session",
      { action: "accept", _meta: { persist: "session" } },
      [ALLOW, SESSION, CANCEL],
      "allow_session",
    ],
    [
      "accept with persist always allows always",
      { action: "accept", _meta: { persist: "always" } },
      [ALLOW, ALWAYS, CANCEL],
      "allow_always",
    ],
    [
      "a remembering choice not offered falls back to allow",
      { action: "accept", _meta: { persist: "always" } },
      [ALLOW, CANCEL],
      "allow",
    ],
    [
      "an answer naming the session option allows for the session",
      { action: "accept", content: { mcp_tool_call_approval_c1: "Allow for this session" } },
      [ALLOW, SESSION, CANCEL],
      "allow_session",
    ],
    [
      "an answer list naming always allows always",
      { action: "accept", content: { answers: ["Allow and don't ask me again"] } },
      [ALLOW, ALWAYS, CANCEL],
      "allow_always",
    ],
    [
      "an explicit Cancel answer cancels",
      { action: "accept", content: { q: "Cancel" } },
      [ALLOW, CANCEL],
      "cancel",
    ],
    [
      "an answer that names nothing allows once",
      { action: "accept", content: { q: "whatever" } },
      [ALLOW, CANCEL],
      "allow",
    ],
  ])("%s", (_rule, answer, options, choice) => {
    expect(approvalChoice(answer, request(options))).toBe(choice);
  });
});

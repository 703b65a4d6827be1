import { describe, expect, it } from "vitest";
import { permissionRequestPayload, postToolUsePayload, preToolUsePayload } from "../src/hook-payload.js";

describe("what a hook reads on stdin", () => {
  it("gives PreToolUse the hook name, the raw arguments, the call and the thread", () => {
    expect(
      preToolUsePayload({
        hookName: "mcp__memory__create_entities",
        toolInput: { entities: [{ name: "a" }] },
        callId: "call-1",
        threadId: "thread-1",
      }),
    ).toStrictEqual({
      session_id: "thread-1",
      hook_event_name: "PreToolUse",
      tool_name: "mcp__memory__create_entities",
      tool_input: { entities: [{ name: "a" }] },
      tool_use_id: "call-1",
    });
  });

  it("sends no arguments as an empty object, and leaves out a missing thread", () => {
    expect(
      permissionRequestPayload({ hookName: "mcp__foo__exec_command", toolInput: null, callId: "c" }),
    ).toStrictEqual({
      hook_event_name: "PermissionRequest",
      tool_name: "mcp__foo__exec_command",
      tool_input: {},
      tool_use_id: "c",
    });
  });

  it("gives PostToolUse the tool's response as well", () => {
    const response = { content: [{ type: "text", text: "ok" }], structuredContent: { n: 1 } };
    expect(
      postToolUsePayload({
        hookName: "mcp__docs__search",
        toolInput: { q: "x" },
        callId: "c",
        toolResponse: response,
      }),
    ).toStrictEqual({
      hook_event_name: "PostToolUse",
      tool_name: "mcp__docs__search",
      tool_input: { q: "x" },
      tool_use_id: "c",
      tool_response: response,
    });
  });
});

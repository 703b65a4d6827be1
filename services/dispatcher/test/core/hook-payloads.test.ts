import { describe, expect, it } from "vitest";
import { postToolUsePayload } from "../../src/core/hook-payloads.js";

describe("postToolUsePayload", () => {
  const result = { content: [{ type: "text" as const, text: "notes" }], structuredContent: { bytes: 5 } };
  const base = { hookName: "mcp__filesystem__read_file", callId: "call-mcp-post", result };
  const response = {
    tool_name: "mcp__filesystem__read_file",
    tool_use_id: "call-mcp-post",
    tool_response: result,
  };

  it.each([
    {
      name: "the rewritten arguments win",
      input: {
        ...base,
        arguments: { path: "/tmp/notes.txt" },
        rewrittenArguments: { path: { file_id: "file_123" } },
      },
      payload: { ...response, tool_input: { path: { file_id: "file_123" } } },
    },
    {
      name: "else the original arguments",
      input: { ...base, arguments: { path: "/tmp/notes.txt" } },
      payload: { ...response, tool_input: { path: "/tmp/notes.txt" } },
    },
    {
      name: "else {}",
      input: { ...base, arguments: null },
      payload: { ...response, tool_input: {} },
    },
    {
      name: "an error outcome is the isError text result",
      input: { ...base, result: { error: "user rejected MCP tool call" } },
      payload: {
        ...response,
        tool_input: {},
        tool_response: { content: [{ type: "text", text: "user rejected MCP tool call" }], isError: true },
      },
    },
  ])("$name", ({ input, payload }) => {
    expect(postToolUsePayload(input)).toEqual(payload);
  });
});

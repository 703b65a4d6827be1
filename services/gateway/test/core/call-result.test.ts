import type { ToolCallReply } from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import { type McpCallResult, mcpCallResult } from "../../src/core/call-result.js";

const base = { callId: "c1", durationMs: 1, wallTimeMs: 2, catalogRevision: 3 } as const;

describe("mcp call result", () => {
  it.each<[string, ToolCallReply, McpCallResult]>([
    [
      "passes the server's raw result through, structured content included",
      {
        ...base,
        status: "completed",
        output: { success: true, body: 'Wall time: 0.0010 seconds\nOutput:\n{"a":1}' },
        result: { content: [{ type: "text", text: "{}" }], structuredContent: { a: 1 } },
      },
      { content: [{ type: "text", text: "{}" }], structuredContent: { a: 1 } },
    ],
    [
      "keeps the server's error result and its isError",
      {
        ...base,
        status: "failed",
        output: { success: false, body: "Wall time: 0.0010 seconds\nOutput:\nboom" },
        result: { content: [{ type: "text", text: "boom" }], isError: true },
      },
      { content: [{ type: "text", text: "boom" }], isError: true },
    ],
    [
      "keeps embedded resources and audio the model projection would flatten",
      {
        ...base,
        status: "completed",
        output: { success: true, body: [{ type: "input_text", text: "Wall time: 0.0010 seconds\nOutput:" }] },
        result: {
          content: [
            { type: "resource", resource: { uri: "test://r", text: "x" } },
            { type: "audio", data: "AAAA", mimeType: "audio/wav" },
          ],
        },
      },
      {
        content: [
          { type: "resource", resource: { uri: "test://r", text: "x" } },
          { type: "audio", data: "AAAA", mimeType: "audio/wav" },
        ],
      },
    ],
    [
      "answers a call the server never saw with the dispatcher's message as an error",
      {
        ...base,
        status: "skipped",
        output: { success: false, body: "Wall time: 0.0001 seconds\nOutput:\n[...]" },
        error: "tool call rejected because the catalog changed after `s/t` was prepared",
      },
      {
        content: [
          { type: "text", text: "tool call rejected because the catalog changed after `s/t` was prepared" },
        ],
        isError: true,
      },
    ],
    [
      "shows what a PostToolUse hook put in place of a successful result",
      {
        ...base,
        status: "completed",
        output: { success: false, body: "blocked: secrets in output" },
        result: { content: [{ type: "text", text: "AWS_SECRET=..." }] },
      },
      { content: [{ type: "text", text: "blocked: secrets in output" }], isError: true },
    ],
    [
      "maps projected content items back to MCP content when there is no raw result",
      {
        ...base,
        status: "completed",
        output: {
          success: true,
          body: [
            { type: "input_text", text: "hi" },
            { type: "input_image", imageUrl: "data:image/png;base64,iVBO" },
            { type: "input_audio", data: "AAAA", format: "wav" },
          ],
        },
      },
      {
        content: [
          { type: "text", text: "hi" },
          { type: "image", data: "iVBO", mimeType: "image/png" },
          { type: "audio", data: "AAAA", mimeType: "audio/wav" },
        ],
      },
    ],
  ])("%s", (_rule, reply, expected) => {
    expect(mcpCallResult(reply)).toEqual(expected);
  });
});

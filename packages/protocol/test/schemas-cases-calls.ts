/** Sample call messages: dispatch, lifecycle events, the connector call and its relays, items and resource origins. */
import {
  AT,
  FINGERPRINT,
  LONG_ID,
  type MessageCases,
  MiB,
  missing,
  RAW_RESULT,
  tooLongId,
  tooManyBytes,
  withField,
  wrongType,
} from "./schemas-support.js";

const toolCallRequest = {
  callId: "call_1",
  threadId: "thread-1",
  turnId: "turn-1",
  tool: "mcp__github__create_issue",
  arguments: '{"title":"Bug"}',
  catalogRevision: 12,
  toolFingerprint: FINGERPRINT,
  strictAutoReview: false,
  model: { images: true, audio: false, truncation: { mode: "tokens", limit: 2500 } },
};

const CALL_IDENTITY = {
  callId: "call_1",
  threadId: "thread-1",
  turnId: "turn-1",
  invocation: { server: "github", tool: "create-issue", arguments: { title: "Bug" } },
  readOnlyHint: false,
  at: AT,
};

export const CALL_CASES: MessageCases = {
  ToolCallRequest: {
    valid: toolCallRequest,
    invalid: [
      ["callId is missing", withField(toolCallRequest, "callId", undefined), missing("callId")],
      [
        "callId is empty",
        withField(toolCallRequest, "callId", ""),
        "callId: Too small: expected string to have >=1 characters",
      ],
      ["callId is over 256 characters", withField(toolCallRequest, "callId", LONG_ID), tooLongId("callId")],
      [
        "arguments are an object, not text",
        withField(toolCallRequest, "arguments", { title: "Bug" }),
        wrongType("arguments", "string", "object"),
      ],
      [
        "arguments are over 8 MiB",
        withField(toolCallRequest, "arguments", "x".repeat(8 * MiB + 1)),
        tooManyBytes("arguments", 8 * MiB),
      ],
      [
        "the fingerprint is upper case",
        withField(toolCallRequest, "toolFingerprint", FINGERPRINT.toUpperCase()),
        "toolFingerprint: must be a lower-case hex SHA-256 (64 characters)",
      ],
      [
        "the truncation mode is unknown",
        withField(toolCallRequest, "model", { truncation: { mode: "lines", limit: 5 } }),
        'model.truncation.mode: Invalid option: expected one of "bytes"|"tokens"',
      ],
      [
        "the tool is a number",
        withField(toolCallRequest, "tool", 5),
        "tool: Invalid input: expected a flat tool name or {namespace, name}",
      ],
    ],
  },
  ToolCallReply: {
    valid: {
      callId: "call_1",
      status: "completed",
      server: "github",
      tool: "create-issue",
      hookName: "mcp__github__create_issue",
      output: {
        success: true,
        body: [
          { type: "input_text", text: "Wall time: 0.0123 seconds\nOutput:" },
          { type: "input_image", imageUrl: "data:image/png;base64,aGk=", detail: "high" },
          { type: "input_audio", data: "aGk=", format: "wav" },
        ],
      },
      result: RAW_RESULT,
      durationMs: 11.5,
      wallTimeMs: 12.3,
      catalogRevision: 12,
    },
    invalid: [
      [
        "the status is unknown",
        {
          callId: "c",
          status: "done",
          output: { success: true, body: "" },
          durationMs: 0,
          wallTimeMs: 0,
          catalogRevision: 0,
        },
        'status: Invalid option: expected one of "completed"|"failed"|"skipped"|"invalid_arguments"',
      ],
      [
        "a content item has an unknown type",
        {
          callId: "c",
          status: "failed",
          output: { success: false, body: [{ type: "input_video" }] },
          durationMs: 0,
          wallTimeMs: 0,
          catalogRevision: 0,
        },
        "output.body: Invalid input: expected a string or an array of input_text, input_image and input_audio items",
      ],
      [
        "the duration is negative",
        {
          callId: "c",
          status: "failed",
          output: { success: false, body: "" },
          durationMs: -1,
          wallTimeMs: 0,
          catalogRevision: 0,
        },
        "durationMs: Too small: expected number to be >=0",
      ],
    ],
  },
  CallBeginEvent: {
    valid: { ...CALL_IDENTITY, connectorId: "conn-1", mcpAppResourceUri: "ui://issues/new" },
    invalid: [
      [
        "the invocation has no arguments key",
        { ...CALL_IDENTITY, invocation: { server: "github", tool: "t" } },
        "invocation.arguments: Invalid input: expected a JSON value, received undefined",
      ],
      ["callId is over 256 characters", { ...CALL_IDENTITY, callId: LONG_ID }, tooLongId("callId")],
    ],
  },
  CallEndEvent: {
    valid: {
      ...CALL_IDENTITY,
      invocation: { ...CALL_IDENTITY.invocation, arguments: null },
      status: "failed",
      durationMs: 3,
      result: { err: "tool call error: boom" },
    },
    invalid: [
      [
        "the status is inProgress",
        { ...CALL_IDENTITY, status: "inProgress", durationMs: 3, result: { err: "x" } },
        'status: Invalid option: expected one of "completed"|"failed"',
      ],
      [
        "the result is neither ok nor err",
        { ...CALL_IDENTITY, status: "completed", durationMs: 3, result: { value: 1 } },
        "result: Invalid input: expected {ok: CallToolResult} or {err: string}",
      ],
    ],
  },
  ConnectorCallRequest: {
    valid: {
      callId: "call_1",
      threadId: "thread-1",
      tool: "create-issue",
      arguments: { title: "Bug", nested: { deep: [1] } },
      preparedRevision: 12,
      timeoutMs: 5000,
      meta: { "x-codex-turn-metadata": { model: "m" } },
    },
    invalid: [
      ["preparedRevision is missing", { callId: "c", tool: "t" }, missing("preparedRevision", "number")],
      [
        "arguments are an array",
        { callId: "c", tool: "t", arguments: [1], preparedRevision: 1 },
        wrongType("arguments", "record", "array"),
      ],
      [
        "the raw tool name is empty",
        { callId: "c", tool: "", preparedRevision: 1 },
        "tool: Too small: expected string to have >=1 characters",
      ],
    ],
  },
  ConnectorCallResult: {
    valid: { result: RAW_RESULT },
    invalid: [
      [
        "an image block has no mimeType",
        { result: { content: [{ type: "image", data: "aGk=" }] } },
        missing("result.content.0.mimeType"),
      ],
    ],
  },
  CallCancel: {
    valid: { callId: "call_1", reason: "the MCP client sent notifications/cancelled" },
    invalid: [
      ["the reason is missing", { callId: "call_1" }, missing("reason")],
      [
        "the reason is over 1 KiB",
        { callId: "call_1", reason: "r".repeat(1025) },
        tooManyBytes("reason", 1024),
      ],
    ],
  },
  CallProgress: {
    valid: { callId: "call_1", server: "github", progress: 3, total: 10, message: "cloning" },
    invalid: [["progress is missing", { callId: "c", server: "github" }, missing("progress", "number")]],
  },
  CallLogging: {
    valid: { callId: "call_1", server: "github", level: "warning", logger: "git", data: { msg: "slow" } },
    invalid: [
      [
        "the level is unknown",
        { callId: "c", server: "github", level: "loud", data: 1 },
        'level: Invalid option: expected one of "debug"|"info"|"notice"|"warning"|"error"|"critical"|"alert"|"emergency"',
      ],
    ],
  },
  CallElicitationRequest: {
    valid: {
      callId: "call_1",
      server: "github",
      request: {
        mode: "form",
        message: "Pick a repo",
        requestedSchema: { type: "object", properties: {} },
        vendor: 1,
      },
    },
    invalid: [
      [
        "the request has no message",
        { callId: "c", server: "github", request: {} },
        missing("request.message"),
      ],
    ],
  },
  CallElicitationResult: {
    loose: true,
    valid: { action: "accept", content: { repo: "toolbus" } },
    invalid: [
      [
        "the action is unknown",
        { action: "ignore" },
        'action: Invalid option: expected one of "accept"|"decline"|"cancel"',
      ],
    ],
  },
  McpToolCallItem: {
    valid: {
      id: "call_1",
      server: "github",
      tool: "create-issue",
      arguments: null,
      status: "failed",
      error: { message: "tool call error: timed out awaiting tools/call after 300s" },
      durationMs: 300_000,
    },
    invalid: [
      [
        "the status is snake case",
        { id: "c", server: "s", tool: "t", arguments: null, status: "in_progress" },
        'status: Invalid option: expected one of "inProgress"|"completed"|"failed"',
      ],
    ],
  },
  DispatchHistoryRequest: {
    valid: { threadId: "thread-1" },
    invalid: [
      [
        "the thread id is empty",
        { threadId: "" },
        "threadId: Too small: expected string to have >=1 characters",
      ],
    ],
  },
  DispatchHistoryResult: {
    valid: {
      items: [
        { id: "call_1", server: "github", tool: "create-issue", arguments: null, status: "inProgress" },
      ],
    },
    invalid: [["items is missing", {}, "items: Invalid input: expected array, received undefined"]],
  },
  McpResourceOrigin: {
    valid: {
      callId: "call_1",
      turnId: "turn-1",
      server: "apps",
      tool: "open",
      connectorId: "conn-1",
      uri: "ui://widget",
      ambiguousAccount: false,
    },
    invalid: [
      [
        "ambiguousAccount is missing",
        { callId: "c", server: "apps", tool: "t", uri: "u" },
        missing("ambiguousAccount", "boolean"),
      ],
    ],
  },
  McpResourceOriginCheckpoint: {
    valid: {
      origins: [
        { callId: "call_1", server: "apps", tool: "open", uri: "ui://widget", ambiguousAccount: true },
      ],
      turns: ["turn-1"],
      currentTurnId: "turn-2",
    },
    invalid: [["turns is missing", { origins: [] }, missing("turns", "array")]],
  },
  CallSamplingRequest: {
    valid: {
      callId: "call_1",
      server: "github",
      request: {
        messages: [{ role: "user", content: { type: "text", text: "Say hi" } }],
        maxTokens: 100,
        systemPrompt: "Be brief.",
        temperature: 0.7,
      },
    },
    invalid: [
      [
        "the request has no maxTokens",
        { callId: "c", server: "github", request: { messages: [] } },
        missing("request.maxTokens", "number"),
      ],
      [
        "the request has no messages",
        { callId: "c", server: "github", request: { maxTokens: 10 } },
        missing("request.messages", "array"),
      ],
    ],
  },
  CallSamplingResult: {
    loose: true,
    valid: {
      role: "assistant",
      content: { type: "text", text: "Hi" },
      model: "test-model",
      stopReason: "endTurn",
    },
    invalid: [
      [
        "the model is missing",
        { role: "assistant", content: { type: "text", text: "Hi" } },
        missing("model"),
      ],
    ],
  },
  CallInputRequest: {
    valid: {
      callId: "call_1",
      server: "github",
      relayId: "r1",
      holdMs: 20_000,
      requests: {
        user_name: { method: "elicitation/create", params: { message: "Your name?" } },
        where: { method: "roots/list" },
      },
    },
    invalid: [
      [
        "a question names no method",
        { callId: "c", server: "github", requests: { user_name: { params: {} } } },
        "requests.user_name.method: Invalid input: expected string, received undefined",
      ],
      [
        "more questions than one round may ask",
        {
          callId: "c",
          server: "github",
          requests: Object.fromEntries(
            Array.from({ length: 17 }, (_, n) => [`q${n}`, { method: "roots/list" }]),
          ),
        },
        "requests: at most 16 input requests in one round",
      ],
    ],
  },
  CallInputResult: {
    valid: { responses: { user_name: { action: "accept", content: { name: "Alice" } } } },
    invalid: [["responses is missing", {}, "responses: Invalid input: expected record, received undefined"]],
  },
};

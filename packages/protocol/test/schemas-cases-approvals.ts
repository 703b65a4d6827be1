/** Sample approval messages: decide, post_tool_use, and the human side. */
import {
  AT,
  FINGERPRINT,
  LATER,
  type MessageCases,
  missing,
  RAW_RESULT,
  tooManyBytes,
  withField,
  wrongType,
} from "./schemas-support.js";

const APPROVAL_REQUEST = {
  requestId: "mcp_tool_call_approval_call_1",
  callId: "call_1",
  threadId: "thread-1",
  server: "github",
  tool: "create-issue",
  hookName: "mcp__github__create_issue",
  header: "Approve app tool call?",
  question: 'Allow the github MCP server to run tool "create-issue"?',
  options: [
    { id: "allow", label: "Allow", description: "Run the tool and continue." },
    { id: "cancel", label: "Cancel", description: "Cancel this tool call." },
  ],
  arguments: { title: "Bug" },
  annotations: { readOnlyHint: false },
  callDigest: "ab".repeat(32),
  createdAt: AT,
  expiresAt: LATER,
};

export const APPROVAL_CASES: MessageCases = {
  ApprovalDecideRequest: {
    valid: {
      callId: "call_1",
      threadId: "thread-1",
      server: "github",
      tool: "create-issue",
      hookName: "mcp__github__create_issue",
      arguments: { title: "Bug" },
      annotations: { readOnlyHint: false, vendorHint: "kept" },
      connectorName: "GitHub",
      title: "Create issue",
      fingerprint: FINGERPRINT,
      catalogRevision: 12,
      strictAutoReview: true,
    },
    invalid: [
      [
        "the fingerprint is missing",
        { callId: "c", server: "github", tool: "t", hookName: "h", arguments: null, catalogRevision: 1 },
        missing("fingerprint"),
      ],
      [
        "the server is missing",
        {
          callId: "c",
          tool: "t",
          hookName: "h",
          arguments: null,
          fingerprint: FINGERPRINT,
          catalogRevision: 1,
        },
        missing("server"),
      ],
      [
        "the arguments key is absent (none is null)",
        {
          callId: "c",
          server: "github",
          tool: "t",
          hookName: "h",
          fingerprint: FINGERPRINT,
          catalogRevision: 1,
        },
        "arguments: Invalid input: expected a JSON value, received undefined",
      ],
    ],
  },
  ApprovalDecideResult: {
    valid: { decision: "approved", source: "hook", updatedArguments: { title: "Bug (rewritten)" } },
    invalid: [
      [
        "the decision is unknown",
        { decision: "maybe", source: "human" },
        'decision: Invalid option: expected one of "approved"|"approved_for_session"|"approved_always"|"denied"|"abort"|"timed_out"',
      ],
      [
        "the source is missing",
        { decision: "denied" },
        'source: Invalid option: expected one of "mode"|"annotations"|"session"|"persistent"|"hook"|"human"|"timeout"|"policy"',
      ],
    ],
  },
  PostToolUseRequest: {
    valid: {
      callId: "call_1",
      hookName: "mcp__github__create_issue",
      toolInput: { title: "Bug" },
      toolResponse: RAW_RESULT,
    },
    invalid: [
      [
        "the response has no content",
        { callId: "c", hookName: "h", toolInput: {}, toolResponse: {} },
        missing("toolResponse.content", "array"),
      ],
      [
        "a text block has no text",
        { callId: "c", hookName: "h", toolInput: {}, toolResponse: { content: [{ type: "text" }] } },
        missing("toolResponse.content.0.text"),
      ],
    ],
  },
  PostToolUseResult: {
    valid: { block: true, reason: "secrets in output" },
    invalid: [["a block has no reason", { block: true }, missing("reason")]],
  },
  ApprovalRequest: {
    valid: APPROVAL_REQUEST,
    invalid: [
      [
        "an option id is unknown",
        { ...APPROVAL_REQUEST, options: [{ id: "later", label: "Later", description: "" }] },
        'options.0.id: Invalid option: expected one of "allow"|"allow_session"|"allow_always"|"decline"|"cancel"',
      ],
      ["expiresAt is missing", withField(APPROVAL_REQUEST, "expiresAt", undefined), missing("expiresAt")],
      [
        "the call digest is not a hex SHA-256",
        { ...APPROVAL_REQUEST, callDigest: "AB".repeat(32) },
        "callDigest: must be a lower-case hex SHA-256 (64 characters)",
      ],
    ],
  },
  ApprovalsListRequest: {
    valid: { limit: 20, cursor: "abc" },
    invalid: [
      ["the body is an array", [], "Invalid input: expected object, received array"],
      [
        "the limit is over the most a page holds",
        { limit: 501 },
        "limit: Too big: expected number to be <=500",
      ],
    ],
  },
  ApprovalsListResult: {
    valid: { pending: [APPROVAL_REQUEST], nextCursor: "abc" },
    invalid: [
      [
        "a pending request has no callId",
        { pending: [withField(APPROVAL_REQUEST, "callId", undefined)] },
        missing("pending.0.callId"),
      ],
    ],
  },
  ApprovalResolveRequest: {
    valid: { requestId: "mcp_tool_call_approval_call_1", choice: "allow_session", by: "alice" },
    invalid: [
      [
        "the choice is unknown",
        { requestId: "r", choice: "yes" },
        'choice: Invalid option: expected one of "allow"|"allow_session"|"allow_always"|"decline"|"cancel"',
      ],
      [
        "the request id is longer than the prefix plus a call id",
        { requestId: "r".repeat(280), choice: "allow" },
        "requestId: Too big: expected string to have <=279 characters",
      ],
    ],
  },
  ApprovalResolveResult: {
    valid: { decision: "approved_for_session" },
    invalid: [
      [
        "the decision is missing",
        {},
        'decision: Invalid option: expected one of "approved"|"approved_for_session"|"approved_always"|"denied"|"abort"|"timed_out"',
      ],
    ],
  },
  ApprovalResolvedEvent: {
    valid: { requestId: "mcp_tool_call_approval_call_1", callId: "call_1", decision: "denied", by: "alice" },
    invalid: [
      [
        "by is empty",
        { requestId: "r", callId: "c", decision: "denied", by: "" },
        "by: Too small: expected string to have >=1 characters",
      ],
    ],
  },
  ApprovalCancelRequest: {
    valid: { callId: "call_1", reason: "caller disconnected" },
    invalid: [
      [
        "the reason is over 64 KiB",
        { callId: "c", reason: "r".repeat(65_537) },
        tooManyBytes("reason", 65_536),
      ],
      ["callId is missing", { reason: "gone" }, missing("callId")],
    ],
  },
  ApprovalCancelResult: {
    valid: { cancelled: false },
    invalid: [["cancelled is a string", { cancelled: "no" }, wrongType("cancelled", "boolean", "string")]],
  },
  ForgetThreadsRequest: {
    valid: { threadIds: ["4d2c9f0e-1b7a-4c1e-9a55-0c3f7e1d2b6a", "codex-thread-7"] },
    invalid: [
      ["no thread is named", { threadIds: [] }, "threadIds: Too small: expected array to have >=1 items"],
      [
        "more threads than one request may name",
        { threadIds: Array.from({ length: 65 }, (_, i) => `t${i}`) },
        "threadIds: Too big: expected array to have <=64 items",
      ],
      [
        "a thread id is empty",
        { threadIds: [""] },
        "threadIds.0: Too small: expected string to have >=1 characters",
      ],
    ],
  },
  ForgetThreadsResult: {
    valid: { forgotten: 2 },
    invalid: [
      ["forgotten is negative", { forgotten: -1 }, "forgotten: Too small: expected number to be >=0"],
    ],
  },
};

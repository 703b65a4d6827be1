/** Sample catalog messages: the KV entry, the catalog requests and the startup/catalog events. */
import {
  AT,
  BAD_SERVER,
  LONG_ID,
  type MessageCases,
  missing,
  RAW_TOOL,
  TOOL_ENTRY,
  tooLongId,
  tooManyBytes,
  withField,
  wrongType,
} from "./schemas-support.js";

const catalogServerEntry = {
  server: "github",
  status: "failed",
  statusError: "MCP client for `github` failed to start: boom",
  statusReason: "reauthentication_required",
  required: false,
  revision: 12,
  instructions: "Use for GitHub.",
  origin: "https://api.example.com",
  tools: [RAW_TOOL],
  resourcesSupported: true,
  listedAt: AT,
  serverInfo: { name: "gh", version: "1.0.0", vendorExtra: true },
  supportsParallelToolCalls: true,
  startupTimeoutMs: 30_000,
  toolTimeoutMs: 300_000,
  omitToolsFrom: ["code_mode"],
};

export const CATALOG_CASES: MessageCases = {
  CatalogServerEntry: {
    valid: catalogServerEntry,
    invalid: [
      [
        "the status is not a known state",
        withField(catalogServerEntry, "status", "sleeping"),
        'status: Invalid option: expected one of "starting"|"ready"|"failed"|"cancelled"|"disabled"',
      ],
      [
        "the revision is negative",
        withField(catalogServerEntry, "revision", -1),
        "revision: Too small: expected number to be >=0",
      ],
      ["the tools are missing", withField(catalogServerEntry, "tools", undefined), missing("tools", "array")],
      [
        "listedAt is not a timestamp",
        withField(catalogServerEntry, "listedAt", "yesterday"),
        "listedAt: Invalid ISO datetime",
      ],
      [
        "a tool has no name",
        withField(catalogServerEntry, "tools", [{ inputSchema: {} }]),
        missing("tools.0.name"),
      ],
    ],
  },
  CatalogGetRequest: {
    valid: { exposure: "all" },
    invalid: [
      [
        "exposure is unknown",
        { exposure: "some" },
        'exposure: Invalid option: expected one of "all"|"model"',
      ],
    ],
  },
  CatalogSnapshot: {
    valid: {
      revision: 12,
      servers: [{ name: "github", status: "ready", required: true, revision: 12 }],
      tools: [TOOL_ENTRY],
      direct: [],
      deferred: ["mcp__github__create_issue"],
    },
    invalid: [
      [
        "a tool has a bad fingerprint",
        {
          revision: 1,
          servers: [],
          tools: [{ ...TOOL_ENTRY, fingerprint: "abc" }],
          direct: [],
          deferred: [],
        },
        "tools.0.fingerprint: must be a lower-case hex SHA-256 (64 characters)",
      ],
      [
        "deferred is missing",
        { revision: 1, servers: [], tools: [], direct: [] },
        missing("deferred", "array"),
      ],
      [
        "a server name is invalid",
        {
          revision: 1,
          servers: [{ name: "a b", status: "ready", required: false, revision: 0 }],
          tools: [],
          direct: [],
          deferred: [],
        },
        "servers.0.name: must match pattern ^[a-zA-Z0-9_-]+$",
      ],
    ],
  },
  CatalogRefreshRequest: {
    valid: { server: "github" },
    invalid: [
      ["the server name has a space", { server: "bad name" }, BAD_SERVER],
      [
        "the server name is too long",
        { server: "s".repeat(129) },
        "server: Too big: expected string to have <=128 characters",
      ],
    ],
  },
  CatalogRefreshResult: {
    valid: { revision: 13 },
    invalid: [["the revision is fractional", { revision: 1.5 }, wrongType("revision", "int", "number")]],
  },
  ResourcesListRequest: {
    valid: { server: "docs", cursor: "page-2" },
    invalid: [
      [
        "the cursor is over 64 KiB",
        { server: "docs", cursor: "x".repeat(65_537) },
        tooManyBytes("cursor", 65_536),
      ],
      ["the cursor is a number", { cursor: 2 }, wrongType("cursor", "string", "number")],
    ],
  },
  ResourcesListResult: {
    valid: {
      resources: [
        { server: "docs", uri: "file:///a.md", name: "a.md", mimeType: "text/markdown", vendor: { x: 1 } },
      ],
      nextCursor: "page-3",
    },
    invalid: [
      [
        "a resource has no server",
        { resources: [{ uri: "file:///a.md", name: "a.md" }] },
        missing("resources.0.server"),
      ],
      [
        "a resource has no uri",
        { resources: [{ server: "docs", name: "a.md" }] },
        missing("resources.0.uri"),
      ],
    ],
  },
  ResourceTemplatesListRequest: {
    valid: { server: "docs" },
    invalid: [["the server is a number", { server: 7 }, wrongType("server", "string", "number")]],
  },
  ResourceTemplatesListResult: {
    valid: { resourceTemplates: [{ server: "docs", uriTemplate: "file:///{path}", name: "files" }] },
    invalid: [
      [
        "a template has no uriTemplate",
        { resourceTemplates: [{ server: "docs", name: "files" }] },
        missing("resourceTemplates.0.uriTemplate"),
      ],
    ],
  },
  ResourcesReadRequest: {
    valid: {
      server: "docs",
      uri: "file:///a.md",
      originCallId: "call_1",
      threadId: "thread-1",
      connectorId: "conn-1",
    },
    invalid: [
      ["the uri is missing", { server: "docs" }, missing("uri")],
      [
        "the uri is empty",
        { server: "docs", uri: "" },
        "uri: Too small: expected string to have >=1 characters",
      ],
      [
        "the origin call id is too long",
        { server: "docs", uri: "u", originCallId: LONG_ID },
        tooLongId("originCallId"),
      ],
    ],
  },
  ResourcesReadResult: {
    valid: {
      server: "docs",
      uri: "file:///a.md",
      contents: [
        { uri: "file:///a.md", mimeType: "text/markdown", text: "# A" },
        { uri: "file:///a.png", blob: "aGk=" },
      ],
      originCallId: "call_1",
    },
    invalid: [
      [
        "a content is neither text nor blob",
        { server: "docs", uri: "u", contents: [{ uri: "u" }] },
        "contents.0: Invalid input: expected resource content with a uri and a text or blob string",
      ],
      ["contents is missing", { server: "docs", uri: "u" }, missing("contents", "array")],
    ],
  },
  CatalogSearchRequest: {
    valid: { query: "create issue", cursor: "20", limit: 10 },
    invalid: [
      ["the query is missing", { limit: 3 }, missing("query")],
      ["the query is over 64 KiB", { query: "q".repeat(65_537) }, tooManyBytes("query", 65_536)],
      ["the limit is zero", { query: "q", limit: 0 }, "limit: Too small: expected number to be >=1"],
      [
        "the limit is over the maximum",
        { query: "q", limit: 201 },
        "limit: Too big: expected number to be <=200",
      ],
    ],
  },
  CatalogSearchResult: {
    valid: { tools: [TOOL_ENTRY], nextCursor: "20" },
    invalid: [
      [
        "a tool has an unknown exposure",
        { tools: [{ ...TOOL_ENTRY, exposure: "sideways" }] },
        'tools.0.exposure: Invalid option: expected one of "hidden"|"code_mode_only"|"direct_model_only"|"direct"|"deferred_model_only"|"deferred"',
      ],
    ],
  },
  ServerStatusEvent: {
    valid: {
      server: "github",
      status: {
        state: "failed",
        error: "MCP client for `github` failed to start: boom",
        reason: "reauthentication_required",
      },
      at: AT,
    },
    invalid: [
      [
        "a failed status has no error",
        { server: "github", status: { state: "failed" }, at: AT },
        missing("status.error"),
      ],
      [
        "the state is unknown",
        { server: "github", status: { state: "asleep" }, at: AT },
        "status.state: Invalid discriminator value. Expected 'starting' | 'ready' | 'failed' | 'cancelled'",
      ],
      ["at is missing", { server: "github", status: { state: "ready" } }, missing("at")],
    ],
  },
  StartupCompleteEvent: {
    valid: { ready: ["github"], failed: [{ server: "docs", error: "spawn ENOENT" }], cancelled: [] },
    invalid: [
      [
        "a failure has no error",
        { ready: [], failed: [{ server: "docs" }], cancelled: [] },
        missing("failed.0.error"),
      ],
    ],
  },
  CatalogEvent: {
    valid: { revision: 13, changed: ["github"] },
    invalid: [
      ["changed is a string", { revision: 13, changed: "github" }, wrongType("changed", "array", "string")],
    ],
  },
  PromptsListRequest: {
    valid: { server: "docs", cursor: "page-2" },
    invalid: [
      ["the server is not a server name", { server: "a b" }, BAD_SERVER],
      ["the cursor is a number", { cursor: 2 }, wrongType("cursor", "string", "number")],
    ],
  },
  PromptsListResult: {
    valid: {
      prompts: [
        {
          server: "docs",
          name: "summarize",
          title: "Summarize",
          description: "Summarize a document.",
          arguments: [{ name: "uri", description: "The document", required: true, vendor: 1 }],
          vendor: { x: 1 },
        },
      ],
      nextCursor: "page-3",
    },
    invalid: [
      ["a prompt has no server", { prompts: [{ name: "summarize" }] }, missing("prompts.0.server")],
      ["a prompt has no name", { prompts: [{ server: "docs" }] }, missing("prompts.0.name")],
      [
        "an argument has no name",
        { prompts: [{ server: "docs", name: "p", arguments: [{ required: true }] }] },
        missing("prompts.0.arguments.0.name"),
      ],
    ],
  },
  PromptsGetRequest: {
    valid: { server: "docs", name: "summarize", arguments: { uri: "file:///a.md" } },
    invalid: [
      ["the name is missing", { server: "docs" }, missing("name")],
      ["the server is missing", { name: "summarize" }, missing("server")],
      [
        "an argument value is not a string",
        { server: "docs", name: "summarize", arguments: { count: 3 } },
        wrongType("arguments.count", "string", "number"),
      ],
    ],
  },
  GetPromptResult: {
    loose: true,
    valid: {
      description: "A summary prompt",
      messages: [
        { role: "user", content: { type: "text", text: "Summarize this." } },
        { role: "user", content: { type: "image", data: "aGk=", mimeType: "image/png" } },
        { role: "assistant", content: { type: "hologram", frames: 3 } },
      ],
    },
    invalid: [
      ["messages is missing", { description: "d" }, missing("messages", "array")],
      [
        "a text message has no text",
        { messages: [{ role: "user", content: { type: "text" } }] },
        missing("messages.0.content.text"),
      ],
    ],
  },
  PromptsGetResult: {
    loose: true,
    valid: {
      resultType: "input_required",
      inputRequests: { context: { method: "elicitation/create", params: { message: "Which context?" } } },
      requestState: "opaque-server-state",
    },
    invalid: [
      [
        "neither a prompt nor questions",
        { resultType: "input_required" },
        "neither a prompt (messages) nor questions first (resultType input_required with inputRequests)",
      ],
    ],
  },
  CompletionCompleteRequest: {
    valid: {
      server: "docs",
      ref: { type: "ref/prompt", name: "summarize" },
      argument: { name: "uri", value: "file:///a" },
      context: { arguments: { language: "en" } },
    },
    invalid: [
      [
        "the reference has an unknown type",
        { server: "docs", ref: { type: "ref/tool", name: "t" }, argument: { name: "a", value: "" } },
        "ref.type: Invalid discriminator value. Expected 'ref/prompt' | 'ref/resource'",
      ],
      [
        "a resource reference has no uri",
        { server: "docs", ref: { type: "ref/resource" }, argument: { name: "a", value: "" } },
        missing("ref.uri"),
      ],
      [
        "the argument has no value",
        { server: "docs", ref: { type: "ref/prompt", name: "p" }, argument: { name: "a" } },
        missing("argument.value"),
      ],
    ],
  },
  CompleteResult: {
    loose: true,
    valid: { completion: { values: ["paris", "park"], total: 2, hasMore: false } },
    invalid: [
      [
        "values is not a list of strings",
        { completion: { values: [1] } },
        wrongType("completion.values.0", "string", "number"),
      ],
      ["completion is missing", {}, missing("completion", "object")],
    ],
  },
  PromptsChangedEvent: {
    valid: { server: "docs", at: AT },
    invalid: [["the server is missing", { at: AT }, missing("server")]],
  },
};

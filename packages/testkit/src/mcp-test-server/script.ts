/**
 * The test server's script: the JSON a test writes to the control file to decide what the
 * MCP test server lists and how each tool behaves. Strict, so a typo in a test fails loudly.
 */
import { z } from "zod";

const Json = z.json();
const JsonObject = z.record(z.string(), Json);

export const ToolBehaviorSchema = z.discriminatedUnion("kind", [
  /** Text content: the call's arguments as JSON. */
  z.strictObject({ kind: z.literal("echo") }),
  z.strictObject({ kind: z.literal("text"), text: z.string() }),
  /** `structuredContent` = value; text content = `text` or the value as JSON. */
  z.strictObject({ kind: z.literal("structured"), value: JsonObject, text: z.string().optional() }),
  /** A result with `isError: true`. */
  z.strictObject({ kind: z.literal("error_result"), text: z.string() }),
  /** A JSON-RPC error response carrying exactly `message` (and `code`, default -32603). */
  z.strictObject({ kind: z.literal("throw"), message: z.string(), code: z.number().int().optional() }),
  /** Never answers; the handler ends only when the client cancels. */
  z.strictObject({ kind: z.literal("hang") }),
  /** Waits `ms`, then echoes. */
  z.strictObject({ kind: z.literal("delay"), ms: z.number().int().nonnegative() }),
  /** Image content; a 1×1 PNG unless `data` (base64) is given. */
  z.strictObject({ kind: z.literal("image"), data: z.string().optional(), mimeType: z.string().optional() }),
  /** Audio content; a tiny silent WAV unless `data` (base64) is given. */
  z.strictObject({ kind: z.literal("audio"), data: z.string().optional(), mimeType: z.string().optional() }),
  /** One text content of `bytes` ASCII characters. */
  z.strictObject({ kind: z.literal("huge"), bytes: z.number().int().nonnegative() }),
  /** `count` progress notifications (when the call has a progressToken), then text `done`. */
  z.strictObject({
    kind: z.literal("progress"),
    count: z.number().int().nonnegative(),
    intervalMs: z.number().int().nonnegative().optional(),
  }),
  /**
   * Sends `elicitation/create` to the client (in the context of the call) and returns its answer as
   * JSON text, or the JSON-RPC error it got as an error result. `echoProgressToken` puts the call's
   * `_meta.progressToken` in the request's `_meta`, as a stdio server can to say which call it is for.
   */
  z.strictObject({
    kind: z.literal("elicit"),
    message: z.string(),
    requestedSchema: JsonObject.optional(),
    /** Asks in URL mode (the person visits `url`) instead of with a form. */
    url: z.string().optional(),
    _meta: JsonObject.optional(),
    echoProgressToken: z.boolean().optional(),
  }),
  /** The server process exits at once (with `exitCode`, default 1) without answering. */
  z.strictObject({ kind: z.literal("crash"), exitCode: z.number().int().optional() }),
  /**
   * Sends `sampling/createMessage` (one user message, `prompt`) and returns the answer's text, or
   * the JSON-RPC error it got as an error result. With `afterMs` it answers `scheduled` at once
   * and asks that long after the call ended, writing the outcome to stderr (`sampling outcome: …`).
   */
  z.strictObject({
    kind: z.literal("sample"),
    prompt: z.string(),
    /** Tools the model may use while answering (sampling with tools, MCP 2025-11-25). */
    tools: z.array(JsonObject).optional(),
    maxTokens: z.number().int().positive().optional(),
    afterMs: z.number().int().nonnegative().optional(),
  }),
  /**
   * Sends a `notifications/message` log (level default `info`, in the context of the call; with
   * `echoProgressToken` carrying the call's progressToken in its `_meta`), waits `holdMs` (so calls
   * overlap), then returns `text` (default `logged`).
   */
  z.strictObject({
    kind: z.literal("log"),
    echoProgressToken: z.boolean().optional(),
    holdMs: z.number().int().nonnegative().optional(),
    level: z
      .enum(["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"])
      .optional(),
    data: Json.optional(),
    text: z.string().optional(),
  }),
  /**
   * MCP 2026-07-28 only: asks `requests` (`inputRequests`, by key) in one `input_required` round
   * with `requestState` `round-1`; the call sent again with answers returns, as JSON text, the
   * `requestState` it came with and the `inputResponses`.
   */
  z.strictObject({
    kind: z.literal("round"),
    requests: z.record(z.string(), z.strictObject({ method: z.string(), params: JsonObject.optional() })),
  }),
]);
export type ToolBehavior = z.infer<typeof ToolBehaviorSchema>;

export const ScriptToolSchema = z.strictObject({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  /** Listed as written; any JSON, so tests can send schemas a client should reject or repair. */
  inputSchema: Json.optional(),
  outputSchema: Json.optional(),
  annotations: JsonObject.optional(),
  icons: z.array(JsonObject).optional(),
  _meta: JsonObject.optional(),
  behavior: ToolBehaviorSchema.default({ kind: "echo" }),
});
export type ScriptTool = z.infer<typeof ScriptToolSchema>;

export const ScriptResourceSchema = z.strictObject({
  uri: z.string(),
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  mimeType: z.string().optional(),
  /** Contents returned by resources/read: `text`, or `blob` (base64). */
  text: z.string().optional(),
  blob: z.string().optional(),
  /** Readable but left out of resources/list: a resource a client reaches through a template. */
  unlisted: z.boolean().optional(),
  icons: z.array(JsonObject).optional(),
  _meta: JsonObject.optional(),
});
export type ScriptResource = z.infer<typeof ScriptResourceSchema>;

export const ScriptResourceTemplateSchema = z.strictObject({
  uriTemplate: z.string(),
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  mimeType: z.string().optional(),
  icons: z.array(JsonObject).optional(),
  _meta: JsonObject.optional(),
});

export const ScriptPromptSchema = z.strictObject({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  arguments: z
    .array(
      z.strictObject({
        name: z.string(),
        description: z.string().optional(),
        required: z.boolean().optional(),
      }),
    )
    .optional(),
  /** prompts/get answers one user text message: this text with every `{arg}` replaced by its value. */
  text: z.string().default(""),
  icons: z.array(JsonObject).optional(),
  _meta: JsonObject.optional(),
});
export type ScriptPrompt = z.infer<typeof ScriptPromptSchema>;

export const TestServerScriptSchema = z.strictObject({
  /** Sent in the initialize result; read when a session starts. */
  instructions: z.string().optional(),
  /** Merged over the default `serverInfo` of the initialize result; read when a session starts. */
  serverInfo: z
    .strictObject({
      name: z.string().optional(),
      title: z.string().optional(),
      version: z.string().optional(),
      description: z.string().optional(),
      websiteUrl: z.string().optional(),
      icons: z.array(JsonObject).optional(),
    })
    .optional(),
  tools: z.array(ScriptToolSchema).default([]),
  /** tools/list pages of this size (cursor = offset); all in one page when absent. */
  toolsPageSize: z.number().int().positive().optional(),
  /** tools/list answers every request with the first page and the same `nextCursor` forever. */
  cursorLoop: z.boolean().optional(),
  /** Appends N generated echo tools `t0000`, `t0001`, … after `tools`. */
  toolCount: z.number().int().nonnegative().optional(),
  /**
   * When set (even to []), the server advertises the resources capability at initialize.
   * resources/read answers from `text`/`blob`.
   */
  resources: z.array(ScriptResourceSchema).optional(),
  resourceTemplates: z.array(ScriptResourceTemplateSchema).optional(),
  /** resources/list and resources/templates/list pages of this size. */
  resourcesPageSize: z.number().int().positive().optional(),
  /**
   * When set (even to []), the server advertises the prompts capability (with list_changed) at
   * initialize. prompts/get refuses an unknown name or a missing required argument (-32602).
   */
  prompts: z.array(ScriptPromptSchema).optional(),
  /** prompts/list pages of this size. */
  promptsPageSize: z.number().int().positive().optional(),
  /**
   * When set, the server advertises completions: completion/complete answers, for any prompt or
   * template, the values listed under the argument's name that start with the typed value.
   */
  completions: z.record(z.string(), z.array(z.string())).optional(),
  /**
   * Lists tools exactly as written: a tool without `inputSchema` goes out without one.
   * Otherwise a missing `inputSchema` is listed as `{type:"object"}`.
   */
  invalidToolSchemas: z.boolean().optional(),
});

/** What a test writes (defaults may be omitted). */
export type TestServerScript = z.input<typeof TestServerScriptSchema>;
/** The script after parsing, as the server uses it. */
export type ParsedTestServerScript = z.output<typeof TestServerScriptSchema>;

/** Parses script JSON text; throws an Error naming every problem. */
export function parseScript(text: string): ParsedTestServerScript {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`test server script is not JSON: ${(error as Error).message}`);
  }
  const parsed = TestServerScriptSchema.safeParse(json);
  if (!parsed.success) throw new Error(`test server script is invalid: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/** One line of the call log: every tools/call the server received, in arrival order. */
export const CallLogLineSchema = z.object({
  at: z.string(),
  /** The process that ran the call (a server started once per principal has several). */
  pid: z.number().int().optional(),
  tool: z.string(),
  arguments: JsonObject.optional(),
  _meta: JsonObject.optional(),
  /** MCP 2026-07-28: the client capabilities the request's envelope declared. */
  clientCapabilities: JsonObject.optional(),
});
export type CallLogLine = z.infer<typeof CallLogLineSchema>;

/**
 * One line of the header log (HTTP only): the headers of every request the server received, in
 * arrival order — what a test reads to see what reached the upstream server (e.g. that no
 * client's token was passed on).
 */
export const HeaderLogLineSchema = z.object({
  at: z.string(),
  method: z.string(),
  headers: z.record(z.string(), z.union([z.string(), z.array(z.string())])),
});
export type HeaderLogLine = z.infer<typeof HeaderLogLineSchema>;

/** One line of the read log: every resources/read the server received, in arrival order. */
export const ReadLogLineSchema = z.object({
  at: z.string(),
  uri: z.string(),
});
export type ReadLogLine = z.infer<typeof ReadLogLineSchema>;

/**
 * One line of the cancellation log: a tools/call the client cancelled while it ran (the client's
 * `notifications/cancelled`, with its reason), or that ended when the connection closed (no reason).
 */
export const CancelLogLineSchema = z.object({
  at: z.string(),
  tool: z.string(),
  reason: z.string().optional(),
  _meta: JsonObject.optional(),
});
export type CancelLogLine = z.infer<typeof CancelLogLineSchema>;

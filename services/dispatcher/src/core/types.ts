/**
 * The structural shapes the dispatcher core works on, mirroring CONTRACT.md ("Dispatch") and
 * the MCP `tools/call` result. Local stand-ins until @toolbus/protocol exports its schemas;
 * each type names the protocol type that should replace it.
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** MCP content blocks (2025-06-18). Fields beyond these are kept but not read. */
export interface TextBlock {
  type: "text";
  text: string;
  annotations?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}
export interface ImageBlock {
  type: "image";
  data: string;
  mimeType?: string;
  annotations?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}
export interface AudioBlock {
  type: "audio";
  data: string;
  mimeType?: string;
  annotations?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}
export interface ResourceLinkBlock {
  type: "resource_link";
  uri: string;
  name: string;
  [key: string]: unknown;
}
export interface EmbeddedResourceBlock {
  type: "resource";
  resource: Record<string, unknown>;
  [key: string]: unknown;
}
/** Replace with the protocol's `ContentBlock`. */
export type ContentBlock = TextBlock | ImageBlock | AudioBlock | ResourceLinkBlock | EmbeddedResourceBlock;

/** An MCP `tools/call` result. Replace with the protocol's `CallToolResult`. */
export interface CallToolResult {
  content: ContentBlock[];
  structuredContent?: Record<string, unknown> | null;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/** What a call produced: the server's result, or an error text (transport error, skip, ...). */
export type ResultOrError = CallToolResult | { error: string };

export type ImageDetail = "auto" | "low" | "high" | "original";

/** Replace with the protocol's `ContentItem` (CONTRACT.md: the model projection's items). */
export type ContentItem =
  | { type: "input_text"; text: string }
  | { type: "input_image"; imageUrl: string; detail?: ImageDetail }
  | { type: "input_audio"; data: string; format?: string };

/**
 * A text block the server marked `_meta["codex/encryptedContent"] = true`: opaque to us,
 * passed through to the model untouched. CONTRACT.md's `ContentItem` has no such variant yet.
 */
export interface EncryptedContentItem {
  type: "encrypted_content";
  encryptedContent: string;
}

export type OutputItem = ContentItem | EncryptedContentItem;

/** `ToolCallReply.output`: what the model sees. */
export interface ModelOutput {
  success: boolean;
  body: string | OutputItem[];
}

export interface TruncationPolicy {
  mode: "bytes" | "tokens";
  limit: number;
}

/** `ToolCallRequest.model`. Replace with the protocol's model-capabilities type. */
export interface ModelCapabilities {
  /** Default true: a model takes images unless told otherwise (Codex's default modalities). */
  images?: boolean;
  /** Default false. */
  audio?: boolean;
  /** Default `{mode:"bytes", limit:10000}`. */
  truncation?: TruncationPolicy;
}

/** `result` of `toolbus.events.call.end`. */
export type EventResult = { ok: CallToolResult } | { err: string };

export type CallEndStatus = "completed" | "failed";

/** Identity and display fields shared by the begin and end events. */
export interface CallEventFields {
  callId: string;
  threadId?: string;
  turnId?: string;
  invocation: { server: string; tool: string; arguments: JsonValue | null };
  connectorId?: string;
  mcpAppResourceUri?: string;
  linkId?: string;
  appName?: string;
  actionName?: string;
  pluginId?: string;
  readOnlyHint?: boolean;
  at: string;
}

/** `toolbus.events.call.begin`. Replace with the protocol's `CallBeginEvent`. */
export type CallBeginEvent = CallEventFields;

/** `toolbus.events.call.end`. Replace with the protocol's `CallEndEvent`. */
export interface CallEndEvent extends CallEventFields {
  status: CallEndStatus;
  durationMs: number;
  result: EventResult;
}

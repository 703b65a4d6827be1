/**
 * The catalog (docs/contract.md "Catalog"): the per-server KV entry the catalog service writes,
 * the normalized snapshot readers build from it, and the `toolbus.catalog.*` requests.
 */
import { z } from "zod";
import { ExposureKind, ExposureSurface } from "../naming/exposure.js";
import {
  InputResponsesSchema,
  McpServerInfoSchema,
  PromptSchema,
  ResourceContentSchema,
  ResourceSchema,
  ResourceTemplateSchema,
  ToolAnnotationsSchema,
  ToolSchema,
} from "./mcp.js";
import {
  CursorSchema,
  cappedString,
  FingerprintSchema,
  IdSchema,
  JsonObjectSchema,
  NameSchema,
  RevisionSchema,
  ServerNameSchema,
  ShortTextSchema,
  TimestampSchema,
  UriSchema,
} from "./primitives.js";

/** A server's state in the catalog: the startup states plus `disabled` (never started). */
export const ServerStatus = {
  starting: "starting",
  ready: "ready",
  failed: "failed",
  cancelled: "cancelled",
  disabled: "disabled",
} as const;
export type ServerStatus = (typeof ServerStatus)[keyof typeof ServerStatus];
export const ServerStatusSchema = z.enum(ServerStatus);

/** Surfaces a server's tools may be left out of (`omit_tools_from`); values of `ExposureSurface`. */
export const ToolSurfaceSchema = z.enum(ExposureSurface);

/**
 * KV bucket `<prefix>_catalog`, key `server.<name>`: one server's entry. Besides the
 * CONTRACT fields it carries the config facts readers need to normalize and call without
 * loading the config file themselves (all optional, absent means the reference default).
 */
export const CatalogServerEntrySchema = z.object({
  server: ServerNameSchema,
  status: ServerStatusSchema,
  /** The display error when `status` is `failed`. */
  statusError: z.string().optional(),
  /** `reauthentication_required` when a failed server needs a new OAuth login. */
  statusReason: z.string().optional(),
  required: z.boolean(),
  /** The catalog revision at which this server's tool list last changed. */
  revision: RevisionSchema,
  /** What the server's `initialize` result said to tell the model, as it said it. */
  instructions: z.string().optional(),
  /** `stdio`, or the URL origin of an HTTP server. */
  origin: z.string(),
  tools: z.array(ToolSchema),
  resourcesSupported: z.boolean(),
  /** The server declared `prompts` at its last start-up (they are listed live, not stored here). */
  promptsSupported: z.boolean().optional(),
  /** The server declared `completions`: `completion/complete` is forwarded to it. */
  completionsSupported: z.boolean().optional(),
  listedAt: TimestampSchema,
  /** The server's `serverInfo` from its last `initialize` (name, title, version, description, icons, website). */
  serverInfo: McpServerInfoSchema.optional(),
  /** `supports_parallel_tool_calls`; default false. */
  supportsParallelToolCalls: z.boolean().optional(),
  /** `startup_timeout_sec` in ms; default 30000. Bounds the dispatcher's readiness wait. */
  startupTimeoutMs: z.int().positive().optional(),
  /** `tool_timeout_sec` in ms; default 300000. */
  toolTimeoutMs: z.int().positive().optional(),
  omitToolsFrom: z.array(ToolSurfaceSchema).optional(),
});
export type CatalogServerEntry = z.infer<typeof CatalogServerEntrySchema>;

/** How a tool reaches the model (docs/reference-behavior.md §3.6): the values of `ExposureKind`. */
export const ToolExposureSchema = z.enum(ExposureKind);

/** One normalized tool: the four identities, its fingerprint and how it is exposed. */
/** The most JSON a tool's `icons` may take in the catalog (a data: URI icon is big). */
export const MAX_TOOL_ICONS_BYTES = 64 * 1024;
/** The most JSON a tool's `_meta` may take in the catalog. */
export const MAX_TOOL_META_BYTES = 16 * 1024;

export const ToolEntrySchema = z.object({
  server: ServerNameSchema,
  rawName: z.string(),
  callableNamespace: z.string(),
  callableName: z.string(),
  flatName: z.string(),
  hookName: z.string(),
  fingerprint: FingerprintSchema,
  revision: RevisionSchema,
  title: z.string().optional(),
  description: z.string(),
  inputSchema: JsonObjectSchema,
  outputSchema: JsonObjectSchema.optional(),
  annotations: ToolAnnotationsSchema.optional(),
  readOnlyHint: z.boolean().optional(),
  supportsParallel: z.boolean(),
  exposure: ToolExposureSchema,
  /**
   * What the server declared for clients to show and to run its UI (MCP Apps'
   * `_meta.ui.resourceUri`), passed on as listed: `icons` up to `MAX_TOOL_ICONS_BYTES` and `_meta`
   * (without the connector keys a server may not set) up to `MAX_TOOL_META_BYTES` of JSON; beyond,
   * the member is left out. Not part of the fingerprint, which covers what a model is shown.
   */
  icons: z.array(z.unknown()).optional(),
  _meta: JsonObjectSchema.optional(),
  /**
   * The name MCP clients see for it (`exposeNames`), set by the readers that show tools to people
   * (the gateway's REST API, the CLI); absent in the catalog's own replies, since it depends on the
   * gateway's `[gateway] naming`, and on tools hidden from the model.
   */
  exposedName: z.string().optional(),
});
export type ToolEntry = z.infer<typeof ToolEntrySchema>;

export const CatalogServerSummarySchema = z.object({
  name: ServerNameSchema,
  status: ServerStatusSchema,
  error: z.string().optional(),
  required: z.boolean(),
  revision: RevisionSchema,
  /** What the server said about itself at its last start-up (title, version, description, icons, website). */
  serverInfo: McpServerInfoSchema.optional(),
  /** Its `initialize` instructions as a model is given them: trimmed, capped at 512 KiB; absent when blank. */
  instructions: z.string().optional(),
});
export type CatalogServerSummary = z.infer<typeof CatalogServerSummarySchema>;

/** Reply of `toolbus.catalog.get`. `direct` and `deferred` list flat names. */
export const CatalogSnapshotSchema = z.object({
  revision: RevisionSchema,
  servers: z.array(CatalogServerSummarySchema),
  tools: z.array(ToolEntrySchema),
  direct: z.array(z.string()),
  deferred: z.array(z.string()),
});
export type CatalogSnapshot = z.infer<typeof CatalogSnapshotSchema>;

/** `all`: every tool, hidden ones included; `model`: what a model may see and call. */
export const CatalogExposureFilter = { all: "all", model: "model" } as const;
export type CatalogExposureFilter = (typeof CatalogExposureFilter)[keyof typeof CatalogExposureFilter];
/** Applied by the catalog reader when a request gives no `exposure`. */
export const DEFAULT_CATALOG_EXPOSURE: CatalogExposureFilter = "model";

export const CatalogGetRequestSchema = z.object({
  exposure: z.enum(CatalogExposureFilter).optional(),
});
export type CatalogGetRequest = z.infer<typeof CatalogGetRequestSchema>;

/** `toolbus.catalog.refresh`: re-list one server, or every server when none is named. */
export const CatalogRefreshRequestSchema = z.object({ server: ServerNameSchema.optional() });
export type CatalogRefreshRequest = z.infer<typeof CatalogRefreshRequestSchema>;

export const CatalogRefreshResultSchema = z.object({ revision: RevisionSchema });
export type CatalogRefreshResult = z.infer<typeof CatalogRefreshResultSchema>;

/** A cursor is only meaningful with a server (the reference rejects it otherwise). */
export const ResourcesListRequestSchema = z.object({
  server: ServerNameSchema.optional(),
  cursor: CursorSchema.optional(),
});
export type ResourcesListRequest = z.infer<typeof ResourcesListRequestSchema>;

export const ServerResourceSchema = ResourceSchema.extend({ server: ServerNameSchema });
export type ServerResource = z.infer<typeof ServerResourceSchema>;

export const ResourcesListResultSchema = z.object({
  resources: z.array(ServerResourceSchema),
  nextCursor: CursorSchema.optional(),
});
export type ResourcesListResult = z.infer<typeof ResourcesListResultSchema>;

export const ResourceTemplatesListRequestSchema = z.object({
  server: ServerNameSchema.optional(),
  cursor: CursorSchema.optional(),
});
export type ResourceTemplatesListRequest = z.infer<typeof ResourceTemplatesListRequestSchema>;

export const ServerResourceTemplateSchema = ResourceTemplateSchema.extend({ server: ServerNameSchema });
export type ServerResourceTemplate = z.infer<typeof ServerResourceTemplateSchema>;

export const ResourceTemplatesListResultSchema = z.object({
  resourceTemplates: z.array(ServerResourceTemplateSchema),
  nextCursor: CursorSchema.optional(),
});
export type ResourceTemplatesListResult = z.infer<typeof ResourceTemplatesListResultSchema>;

/** `originCallId` ties the read to the tool call that produced the URI (see McpResourceOrigin). */
export const ResourcesReadRequestSchema = z.object({
  server: ServerNameSchema,
  uri: UriSchema,
  originCallId: IdSchema.optional(),
  threadId: IdSchema.optional(),
  connectorId: IdSchema.optional(),
});
export type ResourcesReadRequest = z.infer<typeof ResourcesReadRequestSchema>;

export const ResourcesReadResultSchema = z.object({
  server: ServerNameSchema,
  uri: z.string(),
  contents: z.array(ResourceContentSchema),
  originCallId: IdSchema.optional(),
});
export type ResourcesReadResult = z.infer<typeof ResourcesReadResultSchema>;

/** Prompts are paged like resources: a cursor only with a server. */
export const PromptsListRequestSchema = z.object({
  server: ServerNameSchema.optional(),
  cursor: CursorSchema.optional(),
});
export type PromptsListRequest = z.infer<typeof PromptsListRequestSchema>;

export const ServerPromptSchema = PromptSchema.extend({ server: ServerNameSchema });
export type ServerPrompt = z.infer<typeof ServerPromptSchema>;

export const PromptsListResultSchema = z.object({
  prompts: z.array(ServerPromptSchema),
  nextCursor: CursorSchema.optional(),
});
export type PromptsListResult = z.infer<typeof PromptsListResultSchema>;

/** Longest `requestState` toolbus carries for a server (it is the server's, opaque). */
export const MAX_REQUEST_STATE_BYTES = 64 * 1024;

/** MCP prompt argument values are strings. */
export const PromptArgumentValuesSchema = z.record(z.string(), z.string());

/**
 * `name` is the prompt's raw name, as its server listed it. Answered with the raw
 * `GetPromptResult`, or a 2026-07-28 server's questions first (`PromptsGetResult`), answered by
 * asking again with `inputResponses` and the server's `requestState`.
 */
export const PromptsGetRequestSchema = z.object({
  server: ServerNameSchema,
  name: NameSchema,
  arguments: PromptArgumentValuesSchema.optional(),
  inputResponses: InputResponsesSchema.optional(),
  requestState: cappedString(MAX_REQUEST_STATE_BYTES).optional(),
});
export type PromptsGetRequest = z.infer<typeof PromptsGetRequestSchema>;

/** What is completed: a prompt's argument (raw prompt name) or a resource template's variable. */
export const CompletionReferenceSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("ref/prompt"), name: NameSchema }),
  z.object({ type: z.literal("ref/resource"), uri: UriSchema }),
]);
export type CompletionReference = z.infer<typeof CompletionReferenceSchema>;

/** `completion/complete` on one server. Answered with the raw `CompleteResult`. */
export const CompletionCompleteRequestSchema = z.object({
  server: ServerNameSchema,
  ref: CompletionReferenceSchema,
  argument: z.object({ name: NameSchema, value: ShortTextSchema }),
  context: z.object({ arguments: PromptArgumentValuesSchema.optional() }).optional(),
});
export type CompletionCompleteRequest = z.infer<typeof CompletionCompleteRequestSchema>;

export const DEFAULT_SEARCH_LIMIT = 20;
export const MAX_SEARCH_LIMIT = 200;

/** `toolbus.catalog.search`: tools whose search text matches `query`, best first. */
export const CatalogSearchRequestSchema = z.object({
  query: ShortTextSchema,
  cursor: CursorSchema.optional(),
  limit: z.int().min(1).max(MAX_SEARCH_LIMIT).optional(),
});
export type CatalogSearchRequest = z.infer<typeof CatalogSearchRequestSchema>;

export const CatalogSearchResultSchema = z.object({
  tools: z.array(ToolEntrySchema),
  nextCursor: CursorSchema.optional(),
});
export type CatalogSearchResult = z.infer<typeof CatalogSearchResultSchema>;

/**
 * Raw MCP objects as servers send them: server info, tools, resources, prompts, content
 * blocks, tool results and completions. They travel through toolbus untouched, so every schema here is loose: fields
 * this package does not know (newer MCP revisions, `_meta` extensions) are kept, not dropped.
 */
import { z } from "zod";
import { JsonObjectSchema, JsonValueSchema } from "./primitives.js";

/** The `serverInfo` a server reports in `initialize` (MCP `Implementation`). */
export const McpServerInfoSchema = z.looseObject({
  name: z.string(),
  title: z.string().optional(),
  version: z.string(),
  description: z.string().optional(),
  icons: z.array(z.unknown()).optional(),
  websiteUrl: z.string().optional(),
});
export type McpServerInfo = z.infer<typeof McpServerInfoSchema>;

/**
 * Hints about a tool; untrusted, used only for approval policy and parallelism. Its type is
 * `McpToolAnnotations` (`ToolAnnotations` is the naming rules' structural equivalent).
 */
export const ToolAnnotationsSchema = z.looseObject({
  title: z.string().optional(),
  readOnlyHint: z.boolean().optional(),
  destructiveHint: z.boolean().optional(),
  idempotentHint: z.boolean().optional(),
  openWorldHint: z.boolean().optional(),
});
export type McpToolAnnotations = z.infer<typeof ToolAnnotationsSchema>;

/** One tool from `tools/list`. `name` is the raw name sent back in `tools/call`. */
export const ToolSchema = z.looseObject({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  inputSchema: JsonObjectSchema,
  outputSchema: JsonObjectSchema.optional(),
  annotations: ToolAnnotationsSchema.optional(),
  icons: z.array(z.unknown()).optional(),
  _meta: JsonObjectSchema.optional(),
});
export type Tool = z.infer<typeof ToolSchema>;

export const ResourceSchema = z.looseObject({
  uri: z.string(),
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  mimeType: z.string().optional(),
  size: z.number().optional(),
  annotations: JsonObjectSchema.optional(),
  icons: z.array(z.unknown()).optional(),
  _meta: JsonObjectSchema.optional(),
});
export type Resource = z.infer<typeof ResourceSchema>;

export const ResourceTemplateSchema = z.looseObject({
  uriTemplate: z.string(),
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  mimeType: z.string().optional(),
  annotations: JsonObjectSchema.optional(),
  icons: z.array(z.unknown()).optional(),
  _meta: JsonObjectSchema.optional(),
});
export type ResourceTemplate = z.infer<typeof ResourceTemplateSchema>;

export const TextResourceContentSchema = z.looseObject({
  uri: z.string(),
  mimeType: z.string().optional(),
  text: z.string(),
  _meta: JsonObjectSchema.optional(),
});
export type TextResourceContent = z.infer<typeof TextResourceContentSchema>;

/** `blob` is base64; it is not decoded or checked here. */
export const BlobResourceContentSchema = z.looseObject({
  uri: z.string(),
  mimeType: z.string().optional(),
  blob: z.string(),
  _meta: JsonObjectSchema.optional(),
});
export type BlobResourceContent = z.infer<typeof BlobResourceContentSchema>;

/** One item of a `resources/read` result: text or blob (untagged, told apart by the key). */
export const ResourceContentSchema = z.union([TextResourceContentSchema, BlobResourceContentSchema], {
  error: "Invalid input: expected resource content with a uri and a text or blob string",
});
export type ResourceContent = z.infer<typeof ResourceContentSchema>;

export const TextContentSchema = z.looseObject({
  type: z.literal("text"),
  text: z.string(),
  annotations: JsonObjectSchema.optional(),
  _meta: JsonObjectSchema.optional(),
});
export type TextContent = z.infer<typeof TextContentSchema>;

export const ImageContentSchema = z.looseObject({
  type: z.literal("image"),
  data: z.string(),
  mimeType: z.string(),
  annotations: JsonObjectSchema.optional(),
  _meta: JsonObjectSchema.optional(),
});
export type ImageContent = z.infer<typeof ImageContentSchema>;

export const AudioContentSchema = z.looseObject({
  type: z.literal("audio"),
  data: z.string(),
  mimeType: z.string(),
  annotations: JsonObjectSchema.optional(),
  _meta: JsonObjectSchema.optional(),
});
export type AudioContent = z.infer<typeof AudioContentSchema>;

export const ResourceLinkSchema = ResourceSchema.extend({ type: z.literal("resource_link") });
export type ResourceLink = z.infer<typeof ResourceLinkSchema>;

export const EmbeddedResourceSchema = z.looseObject({
  type: z.literal("resource"),
  resource: ResourceContentSchema,
  annotations: JsonObjectSchema.optional(),
  _meta: JsonObjectSchema.optional(),
});
export type EmbeddedResource = z.infer<typeof EmbeddedResourceSchema>;

const KNOWN_CONTENT_BLOCKS = {
  text: TextContentSchema,
  image: ImageContentSchema,
  audio: AudioContentSchema,
  resource_link: ResourceLinkSchema,
  resource: EmbeddedResourceSchema,
} as const;

export type KnownContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource;
/** A block of a type this package does not know; the model sees its JSON as text. */
export type UnknownContentBlock = { type: string; [key: string]: unknown };
export type ContentBlock = KnownContentBlock | UnknownContentBlock;

/**
 * One block of tool-result content. Known types are checked against their shape (so a text
 * block without `text` is rejected, naming `text`); unknown types pass through as they are.
 */
export const ContentBlockSchema = z.looseObject({ type: z.string() }).superRefine((block, ctx) => {
  if (!Object.hasOwn(KNOWN_CONTENT_BLOCKS, block.type)) return;
  const known = KNOWN_CONTENT_BLOCKS[block.type as keyof typeof KNOWN_CONTENT_BLOCKS];
  const result = known.safeParse(block);
  if (result.success) return;
  for (const issue of result.error.issues) {
    ctx.addIssue({ code: "custom", message: issue.message, path: issue.path });
  }
}) as unknown as z.ZodType<ContentBlock>;

/** The raw result of `tools/call`. Never truncated by toolbus except in event copies. */
export const CallToolResultSchema = z.looseObject({
  content: z.array(ContentBlockSchema),
  structuredContent: JsonObjectSchema.nullable().optional(),
  isError: z.boolean().optional(),
  _meta: JsonObjectSchema.optional(),
});
export type CallToolResult = z.infer<typeof CallToolResultSchema>;

/** One argument a prompt takes; MCP prompt argument values are strings. */
export const PromptArgumentSchema = z.looseObject({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  required: z.boolean().optional(),
});
export type PromptArgument = z.infer<typeof PromptArgumentSchema>;

/** One prompt from `prompts/list`. `name` is the raw name sent back in `prompts/get`. */
export const PromptSchema = z.looseObject({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  arguments: z.array(PromptArgumentSchema).optional(),
  icons: z.array(z.unknown()).optional(),
  _meta: JsonObjectSchema.optional(),
});
export type Prompt = z.infer<typeof PromptSchema>;

/** One message of a prompt: a role and one content block (text, image, audio, resource, …). */
export const PromptMessageSchema = z.looseObject({
  role: z.string(),
  content: ContentBlockSchema,
});
export type PromptMessage = z.infer<typeof PromptMessageSchema>;

/** The raw result of `prompts/get`. */
export const GetPromptResultSchema = z.looseObject({
  description: z.string().optional(),
  messages: z.array(PromptMessageSchema),
  _meta: JsonObjectSchema.optional(),
});
export type GetPromptResult = z.infer<typeof GetPromptResultSchema>;

/** Most questions a server may ask in one round; a round with more is refused. */
export const MAX_INPUT_REQUESTS = 16;

/** One question of a 2026-07-28 server's `input_required` round, raw: what it asks and how. */
export const InputRequestSchema = z.looseObject({
  method: z.string().min(1),
  params: JsonObjectSchema.optional(),
});
export type InputRequest = z.infer<typeof InputRequestSchema>;

/** A round's questions, by the keys the server chose. */
export const InputRequestsSchema = z
  .record(z.string().min(1).max(256), InputRequestSchema)
  .refine((requests) => Object.keys(requests).length <= MAX_INPUT_REQUESTS, {
    message: `at most ${MAX_INPUT_REQUESTS} input requests in one round`,
  });

/** The caller's answers to a round (`inputResponses`), by the server's keys, raw. */
export const InputResponsesSchema = z.record(z.string(), JsonValueSchema);

/**
 * A 2026-07-28 server's answer that asks first (`input_required`): the request is sent again
 * with `inputResponses` and the `requestState` it came with.
 */
export const InputRequiredResultSchema = z.looseObject({
  resultType: z.literal("input_required"),
  inputRequests: InputRequestsSchema,
  requestState: z.string().optional(),
});
export type InputRequiredResult = z.infer<typeof InputRequiredResultSchema>;

/** What `prompts/get` answers: the prompt, or (a 2026-07-28 server) questions first. */
export const PromptsGetResultSchema = z.union([InputRequiredResultSchema, GetPromptResultSchema], {
  error: "neither a prompt (messages) nor questions first (resultType input_required with inputRequests)",
});
export type PromptsGetResult = z.infer<typeof PromptsGetResultSchema>;

/**
 * A 2026-07-28 server refused a call for want of a capability its caller did not declare
 * (MCP -32021): toolbus carries the refusal as an error result (the server's words, for a model)
 * with the capabilities under this `_meta` key, so an edge serving that revision answers the
 * client as the server did.
 */
export const REQUIRED_CLIENT_CAPABILITIES_META = "toolbus/requiredClientCapabilities";

/** MCP 2026-07-28's MissingRequiredClientCapability error code. */
export const MISSING_CLIENT_CAPABILITY_CODE = -32021;

/** Whether a result asks first (`input_required`) rather than answers. */
export function asksFirst(result: Record<string, unknown>): result is InputRequiredResult {
  return result.resultType === "input_required";
}

/** The raw result of `completion/complete`: candidate values for one argument. */
export const CompleteResultSchema = z.looseObject({
  completion: z.looseObject({
    values: z.array(z.string()),
    total: z.number().optional(),
    hasMore: z.boolean().optional(),
  }),
  _meta: JsonObjectSchema.optional(),
});
export type CompleteResult = z.infer<typeof CompleteResultSchema>;

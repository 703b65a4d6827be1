/**
 * A dispatcher reply as an MCP `tools/call` result. An MCP client is a model runtime with its
 * own projection, so the server's raw result goes back as it was (content blocks, structured
 * content, isError) whenever the model projection still stands for it; otherwise (no server
 * result, or a PostToolUse hook replaced what the model sees) the projection is mapped.
 */
import { type ContentItem, REQUIRED_CLIENT_CAPABILITIES_META, type ToolCallReply } from "@toolbus/protocol";

export type McpContent =
  | { type: "text"; text: string }
  | { type: "image"; data: string; mimeType: string }
  | { type: "audio"; data: string; mimeType: string }
  | { type: string; [key: string]: unknown };

export interface McpCallResult {
  content: McpContent[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
}

/**
 * The capabilities a 2026-07-28 server refused the call for want of (its -32021, as the
 * connector carries it: an error result naming them in `_meta`), with the server's words;
 * undefined for any other reply. A 2026-07-28 client gets the server's error back; any other
 * reads the error result.
 */
export function refusedForCapabilities(
  reply: ToolCallReply,
): { message: string; requiredCapabilities: Record<string, unknown> } | undefined {
  const required =
    reply.result?.isError === true ? reply.result._meta?.[REQUIRED_CLIENT_CAPABILITIES_META] : undefined;
  if (required === null || typeof required !== "object" || Array.isArray(required)) return undefined;
  const [first] = reply.result?.content ?? [];
  const message =
    first?.type === "text" && typeof first.text === "string" ? first.text : "missing client capability";
  return { message, requiredCapabilities: required as Record<string, unknown> };
}

export function mcpCallResult(reply: ToolCallReply): McpCallResult {
  const { result, output } = reply;
  const rawIsError = result?.isError === true;
  // The projection's success mirrors the raw isError unless a hook replaced the output.
  if (result && output.success === !rawIsError) {
    const { structuredContent, ...rest } = result;
    return {
      ...rest,
      content: result.content as McpContent[],
      ...(structuredContent ? { structuredContent } : {}),
      ...(rawIsError ? { isError: true } : {}),
    };
  }
  if (!result && reply.error !== undefined) {
    return { content: [{ type: "text", text: reply.error }], isError: true };
  }
  const content =
    typeof output.body === "string" ? [{ type: "text", text: output.body }] : output.body.map(contentOf);
  return {
    content,
    ...(result?.structuredContent ? { structuredContent: result.structuredContent } : {}),
    ...(output.success ? {} : { isError: true }),
  };
}

function contentOf(item: ContentItem): McpContent {
  switch (item.type) {
    case "input_text":
      return { type: "text", text: item.text };
    case "input_image": {
      const data = dataUrl(item.imageUrl);
      return data
        ? { type: "image", data: data.data, mimeType: data.mimeType }
        : { type: "text", text: item.imageUrl };
    }
    case "input_audio":
      return { type: "audio", data: item.data, mimeType: audioMimeType(item.format) };
    case "encrypted_content":
      return { type: "text", text: item.encryptedContent };
  }
}

/** `data:<mime>;base64,<data>` → its parts; any other URL → null. */
function dataUrl(url: string): { mimeType: string; data: string } | null {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return match ? { mimeType: match[1]!, data: match[2]! } : null;
}

function audioMimeType(format: string | undefined): string {
  if (!format) return "application/octet-stream";
  return format.includes("/") ? format : `audio/${format}`;
}

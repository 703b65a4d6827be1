/**
 * A call's result as a person reads it on a terminal: the text the tool answered, as it is; any
 * other content one line saying what it is (type, MIME type, size) instead of its base64; the
 * structured content as JSON when the tool gave nothing else. `--json` and `--raw` keep the
 * machine forms.
 */
import type { CallToolResult, ContentBlock } from "@toolbus/protocol";

export function renderCallResult(result: CallToolResult): string {
  const blocks = result.content.map(renderBlock);
  if (blocks.length === 0 && result.structuredContent != null) {
    return JSON.stringify(result.structuredContent, null, 2);
  }
  return blocks.join("\n");
}

function renderBlock(block: ContentBlock): string {
  const field = (name: string): string | undefined => {
    const value = (block as Record<string, unknown>)[name];
    return typeof value === "string" ? value : undefined;
  };
  switch (block.type) {
    case "text":
      return field("text") ?? "";
    case "image":
    case "audio":
      return describe(block.type, [field("mimeType"), sizeOf(field("data"))]);
    case "resource_link":
      return describe("resource link", [field("uri"), field("mimeType")]);
    case "resource": {
      const resource = (block as { resource?: Record<string, unknown> }).resource ?? {};
      const text = typeof resource.text === "string" ? resource.text : undefined;
      const blob = typeof resource.blob === "string" ? resource.blob : undefined;
      const size = text !== undefined ? formatBytes(Buffer.byteLength(text)) : sizeOf(blob);
      const mime = typeof resource.mimeType === "string" ? resource.mimeType : undefined;
      const uri = typeof resource.uri === "string" ? resource.uri : undefined;
      return describe("resource", [uri, mime, size]);
    }
    default:
      return describe(`${block.type} content`, []);
  }
}

/** `[image: image/png, 8 B]`: one line, whatever the content holds. */
function describe(kind: string, parts: ReadonlyArray<string | undefined>): string {
  const known = parts.filter((part): part is string => part !== undefined && part !== "");
  return `[${[kind, ...known].join(", ").replace(/[\r\n]+/g, " ")}]`;
}

function sizeOf(base64: string | undefined): string | undefined {
  return base64 === undefined ? undefined : formatBytes(base64Bytes(base64));
}

/** Decoded size of base64 text, padding accounted for. */
export function base64Bytes(text: string): number {
  const clean = text.replace(/\s/g, "");
  const padding = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((clean.length * 3) / 4) - padding);
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/**
 * The model's view of a call result as terminal text: a string body as it is; content items
 * one after another, media shown as a short placeholder (kind, type, size) instead of base64.
 */
import type { ContentItem, ModelOutput } from "@toolbus/protocol";

export function renderOutputBody(body: ModelOutput["body"]): string {
  if (typeof body === "string") return body;
  return body.map(renderItem).join("\n");
}

function renderItem(item: ContentItem): string {
  switch (item.type) {
    case "input_text":
      return item.text;
    case "input_image":
      return `[image: ${describeUrl(item.imageUrl)}]`;
    case "input_audio":
      return `[audio: ${item.format ?? "audio"}, ${formatBytes(base64Bytes(item.data))}]`;
    case "encrypted_content":
      return "[encrypted content]";
  }
}

function describeUrl(url: string): string {
  const data = /^data:([^;,]*)(;base64)?,(.*)$/s.exec(url);
  if (!data) return url;
  const mime = data[1] || "application/octet-stream";
  const payload = data[3] ?? "";
  const bytes = data[2] ? base64Bytes(payload) : payload.length;
  return `${mime}, ${formatBytes(bytes)}`;
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

/**
 * Body selection of the model output (docs/reference-behavior.md §7): which of a result's parts the
 * model reads, as plain text or as content items. No header and no truncation here.
 */

import type {
  CallToolResult,
  ContentItem,
  ImageDetail,
  ModelCapabilities,
  ModelOutput,
} from "@toolbus/protocol";
import { resultSucceeded } from "./call-outcome.js";
import { isRecord } from "./json.js";

const ENCRYPTED_CONTENT_META_KEY = "codex/encryptedContent";
const IMAGE_DETAIL_META_KEY = "codex/imageDetail";
export const DEFAULT_IMAGE_DETAIL: ImageDetail = "high";
const IMAGE_DETAILS: readonly string[] = ["auto", "low", "high", "original"];

/**
 * 1. any encrypted text block → content items;
 * 2. else non-null structuredContent → its compact JSON;
 * 3. else content items if any image, audio or encrypted item exists, else the compact JSON
 *    of the raw content array.
 */
export function selectOutputBody(
  result: CallToolResult,
  model: Pick<ModelCapabilities, "imageDetailOriginal"> = {},
): ModelOutput {
  const success = resultSucceeded(result);
  const items = result.content.map((block) => toOutputItem(block, model.imageDetailOriginal === true));
  if (items.some((item) => item.type === "encrypted_content")) return { success, body: items };
  if (result.structuredContent !== undefined && result.structuredContent !== null) {
    return { success, body: JSON.stringify(result.structuredContent) };
  }
  if (items.some((item) => item.type !== "input_text")) return { success, body: items };
  return { success, body: JSON.stringify(result.content) };
}

/** `originalDetail`: the model takes `detail: "original"`; without it that detail is dropped, as the reference does. */
function toOutputItem(block: unknown, originalDetail: boolean): ContentItem {
  const fields = isRecord(block) ? block : {};
  const meta = isRecord(fields._meta) ? fields._meta : undefined;
  switch (fields.type) {
    case "text":
      if (typeof fields.text !== "string") break;
      return meta?.[ENCRYPTED_CONTENT_META_KEY] === true
        ? { type: "encrypted_content", encryptedContent: fields.text }
        : { type: "input_text", text: fields.text };
    case "image": {
      const mimeType = mimeTypeOf(fields);
      if (typeof fields.data !== "string" || mimeType === false) break;
      const asked = meta?.[IMAGE_DETAIL_META_KEY];
      const detail =
        typeof asked === "string" && IMAGE_DETAILS.includes(asked)
          ? (asked as ImageDetail)
          : DEFAULT_IMAGE_DETAIL;
      const imageUrl = dataUrl(fields.data, mimeType);
      return detail === "original" && !originalDetail
        ? { type: "input_image", imageUrl }
        : { type: "input_image", imageUrl, detail };
    }
    case "audio": {
      const mimeType = mimeTypeOf(fields);
      if (typeof fields.data !== "string" || mimeType === false) break;
      return { type: "input_audio", data: dataUrl(fields.data, mimeType) };
    }
  }
  // Unknown or malformed blocks reach the model as their JSON.
  return { type: "input_text", text: JSON.stringify(block) ?? "<content>" };
}

/** The block's MIME type (`mimeType`, or the alias `mime_type`); false when it is not a string. */
function mimeTypeOf(fields: Record<string, unknown>): string | undefined | false {
  const mimeType = fields.mimeType ?? fields.mime_type;
  if (mimeType === undefined || mimeType === null) return undefined;
  return typeof mimeType === "string" ? mimeType : false;
}

function dataUrl(data: string, mimeType: string | undefined): string {
  return data.startsWith("data:") ? data : `data:${mimeType ?? "application/octet-stream"};base64,${data}`;
}

/**
 * Media the model cannot take is replaced by a text block before anything else reads the
 * result (docs/reference-behavior.md §4 step 7). The rest of the result is kept as it is.
 */
import type { CallToolResult, ContentBlock, ModelCapabilities } from "@toolbus/protocol";

export const IMAGE_OMITTED_TEXT = "<image content omitted because you do not support image input>";
export const AUDIO_OMITTED_TEXT = "<audio content omitted because you do not support audio input>";

export function omitUnsupportedMedia(
  result: CallToolResult,
  model: Pick<ModelCapabilities, "images" | "audio">,
): CallToolResult {
  const images = model.images ?? true;
  const audio = model.audio ?? false;
  if (images && audio) return result;
  const replace = (block: ContentBlock): ContentBlock => {
    if (block.type === "image" && !images) return { type: "text", text: IMAGE_OMITTED_TEXT };
    if (block.type === "audio" && !audio) return { type: "text", text: AUDIO_OMITTED_TEXT };
    return block;
  };
  if (!result.content.some((block) => replace(block) !== block)) return result;
  return { ...result, content: result.content.map(replace) };
}

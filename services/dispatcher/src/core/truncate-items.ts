/**
 * Truncation of content items under one shared budget (docs/reference-behavior.md §7): text items
 * that fit are kept, the first that overflows is middle-truncated to what is left, later text
 * is dropped and counted; images and encrypted items always stay; audio stays only if it fits.
 */

import type { ContentItem, TruncationPolicy } from "@toolbus/protocol";
import {
  approxBytesForTokens,
  approxTokenCount,
  byteBudget,
  tokenBudget,
  truncateText,
  utf8Length,
} from "./truncate.js";

/**
 * The token estimate of an audio item. The reference decodes the audio for its duration; a
 * pure core cannot, so it uses the reference's fallback: the size of the data URL.
 */
export function estimateAudioTokens(data: string): number {
  return approxTokenCount(data);
}

export function truncateOutputItems(items: readonly ContentItem[], policy: TruncationPolicy): ContentItem[] {
  const out: ContentItem[] = [];
  let remaining = policy.mode === "bytes" ? byteBudget(policy) : tokenBudget(policy);
  let omittedText = 0;
  let omittedAudio = 0;
  for (const item of items) {
    switch (item.type) {
      case "input_text": {
        // An empty text adds nothing for the model but would still take an array slot.
        if (item.text === "") continue;
        if (remaining === 0) {
          omittedText++;
          continue;
        }
        const cost = policy.mode === "bytes" ? utf8Length(item.text) : approxTokenCount(item.text);
        if (cost <= remaining) {
          out.push(item);
          remaining -= cost;
        } else {
          const snippet = truncateText(item.text, { mode: policy.mode, limit: remaining });
          if (snippet === "") omittedText++;
          else out.push({ type: "input_text", text: snippet });
          remaining = 0;
        }
        break;
      }
      case "input_audio": {
        const tokens = estimateAudioTokens(item.data);
        const cost = policy.mode === "bytes" ? approxBytesForTokens(tokens) : tokens;
        if (cost <= remaining) {
          out.push(item);
          remaining -= cost;
        } else {
          omittedAudio++;
        }
        break;
      }
      case "input_image":
      case "encrypted_content":
        out.push(item);
        break;
    }
  }
  if (omittedText > 0) out.push({ type: "input_text", text: `[omitted ${omittedText} text items ...]` });
  if (omittedAudio > 0) out.push({ type: "input_text", text: `[omitted ${omittedAudio} audio items ...]` });
  return out;
}

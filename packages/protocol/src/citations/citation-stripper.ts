/**
 * The streaming stripper of `<oai-mem-citation>` … `</oai-mem-citation>` spans (docs/reference-behavior.md §9):
 * text outside spans flows out as it arrives, span bodies are collected. Matching is literal
 * and non-nested (the first close tag ends a span). A partial open tag at a chunk edge is held
 * back and released as text if the stream ends inside it; a span still open at the end is
 * auto-closed and its body (including any partial close tag) extracted.
 *
 * Linear time: each push scans only the new chunk plus a carried tail shorter than a tag,
 * and span bodies are gathered as parts and joined once.
 */
import { CITATION_CLOSE_TAG, CITATION_OPEN_TAG } from "./memory-citation.js";

export interface CitationStripper {
  /** Feeds the next chunk and returns the text that is now known to be visible. */
  push(chunk: string): string;
  /** Ends the stream: returns the held-back visible text and closes an open span. */
  finish(): string;
  /** Bodies of every span closed so far, in order. */
  readonly bodies: readonly string[];
}

/**
 * Length of the longest suffix of `text[from..]` that is a proper prefix of `tag`. Both tags
 * hold `<` only as their first character, so the only candidate starts at the last `<`.
 */
function heldBackLength(text: string, from: number, tag: string): number {
  const lastAngle = text.lastIndexOf("<");
  if (lastAngle < from || text.length - lastAngle >= tag.length) return 0;
  return tag.startsWith(text.slice(lastAngle)) ? text.length - lastAngle : 0;
}

export function createCitationStripper(): CitationStripper {
  const bodies: string[] = [];
  let carried = "";
  let inSpan = false;
  let bodyParts: string[] = [];

  const closeSpan = (lastPart: string): void => {
    bodyParts.push(lastPart);
    bodies.push(bodyParts.join(""));
    bodyParts = [];
    inSpan = false;
  };

  return {
    bodies,
    push(chunk) {
      const text = carried + chunk;
      let visible = "";
      let position = 0;
      for (;;) {
        const tag = inSpan ? CITATION_CLOSE_TAG : CITATION_OPEN_TAG;
        const found = text.indexOf(tag, position);
        if (found === -1) {
          const keep = heldBackLength(text, position, tag);
          const settled = text.slice(position, text.length - keep);
          if (inSpan) bodyParts.push(settled);
          else visible += settled;
          carried = text.slice(text.length - keep);
          return visible;
        }
        if (inSpan) {
          closeSpan(text.slice(position, found));
        } else {
          visible += text.slice(position, found);
          inSpan = true;
        }
        position = found + tag.length;
      }
    },
    finish() {
      const tail = carried;
      carried = "";
      if (inSpan) {
        closeSpan(tail);
        return "";
      }
      return tail;
    },
  };
}

// Shared helpers for the citations tests: tag literals and feeding a stripper chunk by chunk.
import { createCitationStripper } from "../src/citations/index.js";

export const OPEN = "<oai-mem-citation>";
export const CLOSE = "</oai-mem-citation>";

/** One well-formed citation span around `body`. */
export function span(body: string): string {
  return `${OPEN}${body}${CLOSE}`;
}

export interface Streamed {
  visible: string;
  bodies: string[];
}

/** Feeds the chunks to a fresh stripper and collects everything it produced. */
export function streamThrough(chunks: readonly string[]): Streamed {
  const stripper = createCitationStripper();
  let visible = "";
  for (const chunk of chunks) visible += stripper.push(chunk);
  visible += stripper.finish();
  return { visible, bodies: [...stripper.bodies] };
}

/** Cuts `text` at the given offsets (sorted, within bounds) into consecutive chunks. */
export function cutAt(text: string, offsets: readonly number[]): string[] {
  const chunks: string[] = [];
  let from = 0;
  for (const offset of offsets) {
    chunks.push(text.slice(from, offset));
    from = offset;
  }
  chunks.push(text.slice(from));
  return chunks;
}

/** The format the model is told to emit (docs/reference-behavior.md §9), as one span body. */
export const FORMAT_BODY = [
  "",
  "<citation_entries>",
  "MEMORY.md:234-236|note=[short note]",
  "rollout_summaries/2026-02-17T21-23-02-LN3m-example.md:10-12|note=[weekly report format]",
  "</citation_entries>",
  "<rollout_ids>",
  "019c6e27-e55b-73d1-87d8-4e01f1f75043",
  "</rollout_ids>",
  "",
].join("\n");

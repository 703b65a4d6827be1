/**
 * What the model reads of a finished call's result (docs/reference-behavior.md §7): the wall-time
 * header, the media it can take, truncated to policy × 1.2. The reference's other two readers
 * have no counterpart here: toolbus logs no call output and runs no code-mode scripts (the
 * reply's `result` is the raw result, for clients that want it whole).
 */

import type { ModelCapabilities, ModelOutput, TruncationPolicy } from "@toolbus/protocol";
import { asCallToolResult, type ResultOrError } from "./call-outcome.js";
import { selectOutputBody } from "./output-body.js";
import { scalePolicy, truncateText } from "./truncate.js";
import { truncateOutputItems } from "./truncate-items.js";
import { omitUnsupportedMedia } from "./unsupported-media.js";

export const DEFAULT_TRUNCATION: TruncationPolicy = { mode: "bytes", limit: 10_000 };
/** Headroom for the JSON escaping the output gets inside the model request. */
export const MODEL_BUDGET_FACTOR = 1.2;

export interface ProjectionOptions {
  /** The whole handler's time, approval wait included. */
  wallTimeMs: number;
  model?: ModelCapabilities;
}

export function wallTimeHeader(wallTimeMs: number): string {
  return `Wall time: ${(wallTimeMs / 1000).toFixed(4)} seconds\nOutput:`;
}

/** `ToolCallReply.output`. */
export function projectForModel(outcome: ResultOrError, options: ProjectionOptions): ModelOutput {
  const model = options.model ?? {};
  const { success, body } = selectOutputBody(omitUnsupportedMedia(asCallToolResult(outcome), model), model);
  const header = wallTimeHeader(options.wallTimeMs);
  const policy = scalePolicy(model.truncation ?? DEFAULT_TRUNCATION, MODEL_BUDGET_FACTOR);
  if (typeof body === "string") {
    return { success, body: truncateText(body === "" ? header : `${header}\n${body}`, policy) };
  }
  return { success, body: truncateOutputItems([{ type: "input_text", text: header }, ...body], policy) };
}

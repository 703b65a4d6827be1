/**
 * What a call's end event carries (docs/reference-behavior.md §6, docs/contract.md "Dispatch"): its
 * status and a copy of the outcome whose serialized JSON stays within 1 MiB. A larger result
 * becomes one text block previewing its serialized JSON (structuredContent and `_meta` are
 * dropped, `isError` is kept); a larger error text is middle-truncated. The model output and
 * the reply's raw result are separate and never shortened by this.
 */

import type { CallEndStatus, CallOutcome, CallToolResult } from "@toolbus/protocol";
import type { ResultOrError } from "./call-outcome.js";
import { isCallError } from "./call-outcome.js";
import { truncateMiddleChars, utf8Length } from "./truncate.js";

export const EVENT_RESULT_MAX_BYTES = 1_048_576;
/** Each refit shrinks the budget in proportion to the overshoot; past this many, give up on a preview. */
const MAX_FIT_ROUNDS = 20;

export function endStatus(outcome: ResultOrError): CallEndStatus {
  return isCallError(outcome) || outcome.isError === true ? "failed" : "completed";
}

/**
 * The event copy. Ok: the result itself when its JSON fits in `maxBytes`, else a preview
 * result whose JSON fits. Err: the text, middle-truncated so that its JSON string fits.
 */
export function eventResultCopy(outcome: ResultOrError, maxBytes = EVENT_RESULT_MAX_BYTES): CallOutcome {
  if (isCallError(outcome)) {
    return { err: fitPreview(outcome.error, maxBytes, (text) => text) };
  }
  const serialized = JSON.stringify(outcome);
  if (utf8Length(serialized) <= maxBytes) return { ok: outcome };
  return { ok: fitPreview(serialized, maxBytes, (text) => previewResult(text, outcome.isError)) };
}

function previewResult(text: string, isError: boolean | undefined): CallToolResult {
  const content: CallToolResult["content"] = [{ type: "text", text }];
  return isError === undefined ? { content } : { content, isError };
}

/**
 * Middle-truncates `text` to a budget at which `wrap(preview)` serializes within `maxBytes`:
 * the preview is escaped again inside JSON, so its own size is not enough. One round for
 * plain text, a few more when escaping or a tiny cap make the overshoot large.
 */
function fitPreview<T>(text: string, maxBytes: number, wrap: (preview: string) => T): T {
  let budget = maxBytes;
  for (let round = 0; ; round++) {
    const value = wrap(truncateMiddleChars(text, budget));
    const size = utf8Length(JSON.stringify(value));
    if (size <= maxBytes || budget === 0) return value;
    budget = round < MAX_FIT_ROUNDS ? Math.floor((budget * maxBytes) / size) : 0;
  }
}

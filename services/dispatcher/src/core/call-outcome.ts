/**
 * One view of a call's outcome for every projection: an error string E reads as the result
 * `{content:[{type:"text",text:E}], isError:true}` (docs/reference-behavior.md §4 step 10).
 */
import type { CallToolResult } from "@toolbus/protocol";

/** What a call produced: the server's result, or an error text (transport error, skip, ...). */
export type ResultOrError = CallToolResult | { error: string };

export function isCallError(outcome: ResultOrError): outcome is { error: string } {
  return !("content" in outcome) && typeof (outcome as { error?: unknown }).error === "string";
}

export function errorResult(message: string): CallToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}

export function asCallToolResult(outcome: ResultOrError): CallToolResult {
  return isCallError(outcome) ? errorResult(outcome.error) : outcome;
}

/** `success = isError != true`. */
export function resultSucceeded(result: CallToolResult): boolean {
  return result.isError !== true;
}

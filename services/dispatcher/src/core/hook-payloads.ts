/**
 * What PostToolUse hooks receive for an MCP call (docs/reference-behavior.md §4 step 10): the hook
 * name (`mcp__<ns>__<tool>`), the input and the whole result as JSON (a skip or transport error
 * reads as an `isError` text result). PreToolUse hooks run inside the approvals service.
 */

import type { CallToolResult, JsonValue } from "@toolbus/protocol";
import type { ResultOrError } from "./call-outcome.js";
import { asCallToolResult } from "./call-outcome.js";

export interface PostToolUsePayload {
  tool_name: string;
  tool_use_id: string;
  tool_input: JsonValue;
  tool_response: CallToolResult;
}

/** `tool_input` is the rewritten arguments, else the original ones, else `{}`. */
export function postToolUsePayload(input: {
  hookName: string;
  callId: string;
  arguments?: JsonValue | null;
  rewrittenArguments?: JsonValue | null;
  result: ResultOrError;
}): PostToolUsePayload {
  return {
    tool_name: input.hookName,
    tool_use_id: input.callId,
    tool_input: input.rewrittenArguments ?? input.arguments ?? {},
    tool_response: asCallToolResult(input.result),
  };
}

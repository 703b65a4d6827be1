/**
 * What PreToolUse and PostToolUse hooks receive for an MCP call (codex-mcp-behavior.md §4
 * steps 0 and 10): the hook name (`mcp__<ns>__<tool>`), the input and, after the call, the
 * whole result as JSON (a skip or transport error reads as an `isError` text result).
 */

import type { CallToolResult, JsonValue } from "@toolbus/protocol";
import type { ResultOrError } from "./call-outcome.js";
import { asCallToolResult } from "./call-outcome.js";
import { parseToolArguments } from "./tool-arguments.js";

export interface PreToolUsePayload {
  tool_name: string;
  tool_input: JsonValue;
}

export interface PostToolUsePayload {
  tool_name: string;
  tool_use_id: string;
  tool_input: JsonValue;
  tool_response: CallToolResult;
}

/** `tool_input` is `{}` for blank arguments, the raw text when it is not JSON, else the parsed JSON. */
export function preToolUsePayload(input: { hookName: string; rawArguments: string }): PreToolUsePayload {
  const parsed = parseToolArguments(input.rawArguments);
  const toolInput: JsonValue =
    parsed.kind === "none" ? {} : parsed.kind === "invalid_json" ? input.rawArguments : parsed.value;
  return { tool_name: input.hookName, tool_input: toolInput };
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

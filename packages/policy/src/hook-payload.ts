/**
 * What a hook reads on stdin (or as an HTTP hook's POST body), in Claude Code's snake_case shape.
 * `tool_name` is the hook name (`mcp__<ns>__<tool>`), `tool_use_id` the call id, `session_id` the
 * thread id when the call has one.
 */
import type { HookEvent } from "./hooks-file.js";

export interface HookPayload {
  session_id?: string;
  hook_event_name: HookEvent;
  tool_name: string;
  tool_input: unknown;
  tool_use_id?: string;
  tool_response?: unknown;
}

export interface HookPayloadInput {
  hookName: string;
  /** The call's arguments; null or undefined (no arguments) is sent as `{}`. */
  toolInput: unknown;
  callId?: string;
  threadId?: string;
}

export function preToolUsePayload(input: HookPayloadInput): HookPayload {
  return basePayload("PreToolUse", input);
}

export function permissionRequestPayload(input: HookPayloadInput): HookPayload {
  return basePayload("PermissionRequest", input);
}

/** `toolResponse` is the raw CallToolResult the server returned. */
export function postToolUsePayload(input: HookPayloadInput & { toolResponse: unknown }): HookPayload {
  return { ...basePayload("PostToolUse", input), tool_response: input.toolResponse };
}

function basePayload(event: HookEvent, input: HookPayloadInput): HookPayload {
  return {
    ...(input.threadId === undefined ? {} : { session_id: input.threadId }),
    hook_event_name: event,
    tool_name: input.hookName,
    tool_input: input.toolInput ?? {},
    ...(input.callId === undefined ? {} : { tool_use_id: input.callId }),
  };
}

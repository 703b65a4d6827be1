/**
 * What the PreToolUse and PermissionRequest hooks of a call decided, once they have run: the input
 * `decide` takes back after a `needs_hooks` step. Reading a verdict from a hook's run is the
 * approvals service's job (it runs the hooks); the policy only reasons with the result.
 */
import type { JsonValue } from "./types.js";

export type HookOutcome =
  | { kind: "allow"; reason?: string; updatedInput?: { [key: string]: JsonValue } }
  | { kind: "ask"; reason?: string; updatedInput?: { [key: string]: JsonValue } }
  | { kind: "deny"; reason: string }
  /** No verdict; `warning` says why a hook's output was ignored, for the log. */
  | { kind: "none"; warning?: string };

/** The hook events whose verdict decides a call (PostToolUse runs after it). */
export type ApprovalHookEvent = "PreToolUse" | "PermissionRequest";

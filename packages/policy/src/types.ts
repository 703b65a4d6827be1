/**
 * The wire shapes of docs/contract.md "Approvals" (re-exported from @toolbus/protocol, whose zod
 * schemas are their single source of truth) under the names the policy uses, and the approval
 * modes.
 */
import type {
  ApprovalDecideRequest,
  ApprovalDecideResult,
  ApprovalSource,
  McpToolAnnotations,
} from "@toolbus/protocol";

export type {
  ApprovalChoice,
  ApprovalDecision,
  ApprovalOption,
  ApprovalRequest,
  JsonValue,
} from "@toolbus/protocol";

/**
 * Per-tool approval mode (docs/reference-behavior.md §1), set by `tools.<t>.approval_mode` or the server's
 * `default_tools_approval_mode`: `auto` decides from tool annotations; `prompt` always asks;
 * `writes` asks unless read-only; `approve` never asks.
 */
export const APPROVAL_MODES = ["auto", "prompt", "writes", "approve"] as const;
export type ApprovalMode = (typeof APPROVAL_MODES)[number];

/** MCP `ToolAnnotations`; only the hints matter to approvals. */
export type ToolAnnotations = McpToolAnnotations;

/** `toolbus.approvals.decide` request. `arguments` is the parsed JSON the model sent (null: none). */
export type DecideRequest = ApprovalDecideRequest;

/** `toolbus.approvals.decide` result. */
export type DecideResult = ApprovalDecideResult;

export type DecisionSource = ApprovalSource;

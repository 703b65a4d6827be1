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

/**
 * The reference's names read backwards (`approve` means "never ask"), so each mode has a second
 * name that says what it does, accepted wherever a mode is configured and read as that mode.
 */
export const APPROVAL_MODE_ALIASES = {
  ask_unless_safe: "auto",
  always_ask: "prompt",
  ask_unless_read_only: "writes",
  never_ask: "approve",
} as const satisfies Record<string, ApprovalMode>;
export type ApprovalModeAlias = keyof typeof APPROVAL_MODE_ALIASES;

/**
 * When each mode asks a human before a call, as the docs and `--help` say it (the root README's
 * table is checked against this and `approvalRequired`). Hooks and `[approvals] policy` apply on
 * top of every mode; remembered answers ("allow for this session", "always") exist in `auto` only.
 */
export const APPROVAL_MODE_MEANINGS: Readonly<Record<ApprovalMode, string>> = {
  auto: "asks unless the tool says it is read-only (and not destructive), or neither destructive nor open-world; a tool that says nothing is asked about",
  prompt: "always asks",
  writes: "asks unless the tool says it is read-only",
  approve: "never asks",
};

/** MCP `ToolAnnotations`; only the hints matter to approvals. */
export type ToolAnnotations = McpToolAnnotations;

/** `toolbus.approvals.decide` request. `arguments` is the parsed JSON the model sent (null: none). */
export type DecideRequest = ApprovalDecideRequest;

/** `toolbus.approvals.decide` result. */
export type DecideResult = ApprovalDecideResult;

export type DecisionSource = ApprovalSource;

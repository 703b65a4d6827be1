/**
 * The wire shapes of CONTRACT.md "Approvals" (re-exported from @toolbus/protocol, whose zod
 * schemas are their single source of truth) under the names the core uses, plus the policy words
 * the core reasons with.
 */
import {
  type ApprovalChoice,
  ApprovalChoice as ApprovalChoiceValues,
  type ApprovalDecideRequest,
  type ApprovalDecideResult,
  type ApprovalDecision,
  ApprovalDecision as ApprovalDecisionValues,
  type ApprovalSource,
  ApprovalSource as ApprovalSourceValues,
  type McpToolAnnotations,
} from "@toolbus/protocol";

export type {
  ApprovalChoice,
  ApprovalDecision,
  ApprovalOption,
  ApprovalRequest,
  JsonValue,
} from "@toolbus/protocol";

/** Per-tool approval mode (reference §1): `tools.<t>.approval_mode` > server default > `auto`. */
export const APPROVAL_MODES = ["auto", "prompt", "writes", "approve"] as const;
export type ApprovalMode = (typeof APPROVAL_MODES)[number];

/**
 * Per-deployment approval policy. toolbus has no sandbox, so only the two words that matter for
 * MCP calls remain: `on-request` (ask a human when needed) and `never` (no human is ever asked;
 * a call that would need one is denied). Default `on-request`.
 */
export const APPROVAL_POLICIES = ["on-request", "never"] as const;
export type ApprovalPolicy = (typeof APPROVAL_POLICIES)[number];

/**
 * What the agent may touch, in the reference's terms: `restricted` (a sandbox) or `full-access`
 * (no sandbox, or an external one). With policy `never`, full access runs every call without
 * asking anyone (reference §5.2 step 1); with `on-request` it changes nothing. Default `restricted`.
 */
export const PERMISSION_PROFILES = ["restricted", "full-access"] as const;
export type PermissionProfile = (typeof PERMISSION_PROFILES)[number];

/** MCP `ToolAnnotations`; only the hints matter to approvals. */
export type ToolAnnotations = McpToolAnnotations;

/** `toolbus.approvals.decide` request. `arguments` is the parsed JSON the model sent (null: none). */
export type DecideRequest = ApprovalDecideRequest;

/** `toolbus.approvals.decide` result. */
export type DecideResult = ApprovalDecideResult;

export type DecisionSource = ApprovalSource;

export const APPROVAL_DECISIONS: readonly ApprovalDecision[] = Object.values(ApprovalDecisionValues);
export const DECISION_SOURCES: readonly DecisionSource[] = Object.values(ApprovalSourceValues);
export const APPROVAL_CHOICES: readonly ApprovalChoice[] = Object.values(ApprovalChoiceValues);

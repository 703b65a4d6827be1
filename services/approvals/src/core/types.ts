/**
 * The wire shapes of docs/contract.md "Approvals" (re-exported from @toolbus/protocol, whose zod
 * schemas are their single source of truth) under the names the core uses, plus the policy words
 * the core reasons with.
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

/** Per-tool approval mode (docs/reference-behavior.md §1): `tools.<t>.approval_mode` > server default > `auto`. */
export const APPROVAL_MODES = ["auto", "prompt", "writes", "approve"] as const;
export type ApprovalMode = (typeof APPROVAL_MODES)[number];

/** The deployment's policy and permission profile: one rule, shared with the catalog (@toolbus/config). */
export {
  APPROVAL_POLICIES,
  type ApprovalPolicy,
  PERMISSION_PROFILES,
  type PermissionProfile,
} from "@toolbus/config";

/** MCP `ToolAnnotations`; only the hints matter to approvals. */
export type ToolAnnotations = McpToolAnnotations;

/** `toolbus.approvals.decide` request. `arguments` is the parsed JSON the model sent (null: none). */
export type DecideRequest = ApprovalDecideRequest;

/** `toolbus.approvals.decide` result. */
export type DecideResult = ApprovalDecideResult;

export type DecisionSource = ApprovalSource;

/**
 * The wire shapes of CONTRACT.md "Approvals", as plain structural types, plus the policy words the
 * core reasons with. They mirror the contract exactly; once @toolbus/protocol publishes its zod
 * schemas for these messages, the wire types here should become re-exports of those.
 */

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

/** MCP `ToolAnnotations`; only the hints matter to approvals. */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** `toolbus.approvals.decide` request. `arguments` is the parsed JSON the model sent (null: none). */
export interface DecideRequest {
  callId: string;
  threadId?: string;
  turnId?: string;
  server: string;
  tool: string;
  hookName: string;
  arguments: unknown;
  annotations?: ToolAnnotations;
  connectorId?: string;
  connectorName?: string;
  title?: string;
  description?: string;
  fingerprint: string;
  catalogRevision: number;
  strictAutoReview?: boolean;
}

export const APPROVAL_DECISIONS = [
  "approved",
  "approved_for_session",
  "approved_always",
  "denied",
  "abort",
  "timed_out",
] as const;
export type ApprovalDecision = (typeof APPROVAL_DECISIONS)[number];

export const DECISION_SOURCES = [
  "mode",
  "annotations",
  "session",
  "persistent",
  "hook",
  "human",
  "timeout",
  "policy",
] as const;
export type DecisionSource = (typeof DECISION_SOURCES)[number];

/** `toolbus.approvals.decide` result. */
export interface DecideResult {
  decision: ApprovalDecision;
  source: DecisionSource;
  message?: string;
  updatedArguments?: unknown;
}

export const APPROVAL_CHOICES = ["allow", "allow_session", "allow_always", "decline", "cancel"] as const;
export type ApprovalChoice = (typeof APPROVAL_CHOICES)[number];

export interface ApprovalOption {
  id: ApprovalChoice;
  label: string;
  description: string;
}

/**
 * `toolbus.approvals.pending` event body and `toolbus.approvals.list` item. Times are ISO 8601.
 * `threadId`, `turnId`, `title` and `description` go beyond CONTRACT.md, as in @toolbus/protocol.
 */
export interface ApprovalRequest {
  requestId: string;
  callId: string;
  threadId?: string;
  turnId?: string;
  server: string;
  tool: string;
  hookName: string;
  header: string;
  question: string;
  options: ApprovalOption[];
  arguments: unknown;
  annotations?: ToolAnnotations;
  title?: string;
  description?: string;
  createdAt: string;
  expiresAt: string;
}

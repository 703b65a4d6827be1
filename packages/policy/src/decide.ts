/**
 * The approval decision for one call (docs/reference-behavior.md §5.2), as a pure step function. Each call of
 * `decide` either settles the call or names the one thing it still needs: hook verdicts, stored
 * grants, or a human. The caller supplies that and calls again with the same input.
 *
 * Order:
 * 0. PreToolUse hooks (when any match): deny settles; allow settles unless strict; ask forces review;
 *    a rewrite of the input carries through every later step.
 * 1. Unless strict or forced: mode `approve` → approved (source mode); policy `never` with
 *    full access → approved (source policy), whatever the mode and annotations.
 * 2. Unless strict or forced: not required by mode and annotations → approved (source annotations).
 * 3. Unless strict or forced: a session grant for this tool definition → approved_for_session, and
 *    PermissionRequest hooks do not run; then a persistent grant → approved_always.
 * 4. PermissionRequest hooks (when any match): allow or deny settles.
 * 5. Policy `never` → denied (source policy); otherwise a human.
 *
 * A dispatcher holding the published policy, hooks and session grants can run this locally: a
 * `decided` step needs no bus hop, and any other step means "ask the approvals service".
 */

import { approvalRequired } from "./approval-mode.js";
import { type ApprovalPolicy, type PermissionProfile, policyAutoApproves } from "./approval-policy.js";
import { buildApprovalRequest } from "./approval-prompt.js";
import { callDigestOf } from "./call-binding.js";
import { type GrantKeys, type GrantLookup, grantApplies, grantKeys } from "./grant-keys.js";
import { type HookPayload, permissionRequestPayload, preToolUsePayload } from "./hook-payload.js";
import type { ApprovalHookEvent, HookOutcome } from "./hook-verdict.js";
import { type HookHandler, type HooksConfig, matchingHooks } from "./hooks-file.js";
import type { ApprovalMode, ApprovalRequest, DecideRequest, DecideResult, JsonValue } from "./types.js";

export const POLICY_NEVER_MESSAGE = "MCP tool call requires approval, but approval policy is never";

export interface DecideInput {
  request: DecideRequest;
  /** The tool's effective mode (`resolveApprovalMode`). */
  mode: ApprovalMode;
  /** Epoch milliseconds; dates a request put to a human. */
  now: number;
}

export interface ApprovalState {
  policy: ApprovalPolicy;
  /** Default `restricted`. */
  permissionProfile?: PermissionProfile;
  hooks: HooksConfig;
  /** How long a human has to answer. */
  timeoutMs: number;
  /** Absent when this evaluator does not hold the store: the step then asks for it. */
  sessionGrants?: GrantLookup;
  persistentGrants?: GrantLookup;
}

/** The combined verdict of each event's hooks, once they have run (`combineHookOutcomes`). */
export type HookVerdicts = Partial<Record<ApprovalHookEvent, HookOutcome>>;

export type DecideStep =
  | { kind: "decided"; result: DecideResult }
  | { kind: "needs_hooks"; event: ApprovalHookEvent; hooks: HookHandler[]; payload: HookPayload }
  | { kind: "needs_grants"; keys: GrantKeys }
  | { kind: "needs_human"; request: ApprovalRequest; updatedArguments?: JsonValue };

export function decide(input: DecideInput, state: ApprovalState, verdicts: HookVerdicts = {}): DecideStep {
  const { request, mode } = input;
  const strict = request.strictAutoReview === true;
  let updatedArguments: JsonValue | undefined;
  let review = strict;

  const settle = (result: DecideResult): DecideStep => {
    const approved = result.decision.startsWith("approved");
    return {
      kind: "decided",
      result: approved && updatedArguments !== undefined ? { ...result, updatedArguments } : result,
    };
  };
  const toolInput = () => (updatedArguments === undefined ? request.arguments : updatedArguments);
  const payloadInput = () => ({
    hookName: request.hookName,
    toolInput: toolInput(),
    callId: request.callId,
    threadId: request.threadId,
  });

  const preHooks = matchingHooks(state.hooks, "PreToolUse", request.hookName);
  if (preHooks.length > 0) {
    const verdict = verdicts.PreToolUse;
    if (verdict === undefined) {
      return {
        kind: "needs_hooks",
        event: "PreToolUse",
        hooks: preHooks,
        payload: preToolUsePayload(payloadInput()),
      };
    }
    if (verdict.kind === "deny") {
      return settle({ decision: "denied", source: "hook", message: verdict.reason });
    }
    if (verdict.kind !== "none" && verdict.updatedInput !== undefined) {
      updatedArguments = verdict.updatedInput;
    }
    if (verdict.kind === "allow" && !strict) return settle({ decision: "approved", source: "hook" });
    if (verdict.kind === "ask") review = true;
  }

  if (!review) {
    if (mode === "approve") return settle({ decision: "approved", source: "mode" });
    if (policyAutoApproves(state)) {
      return settle({ decision: "approved", source: "policy" });
    }
    if (!approvalRequired(mode, request.annotations)) {
      return settle({ decision: "approved", source: "annotations" });
    }
  }
  const keys = grantKeys(mode, request);
  if (!review) {
    const remembered = rememberedDecision(keys, state, request.fingerprint);
    if (remembered !== undefined) {
      return remembered.kind === "decided" ? settle(remembered.result) : remembered;
    }
  }

  const permissionHooks = matchingHooks(state.hooks, "PermissionRequest", request.hookName);
  if (permissionHooks.length > 0) {
    const verdict = verdicts.PermissionRequest;
    if (verdict === undefined) {
      return {
        kind: "needs_hooks",
        event: "PermissionRequest",
        hooks: permissionHooks,
        payload: permissionRequestPayload(payloadInput()),
      };
    }
    if (verdict.kind === "deny") {
      return settle({ decision: "denied", source: "hook", message: verdict.reason });
    }
    if (verdict.kind === "allow") {
      if (verdict.updatedInput !== undefined) updatedArguments = verdict.updatedInput;
      return settle({ decision: "approved", source: "hook" });
    }
  }

  if (state.policy === "never") {
    return settle({ decision: "denied", source: "policy", message: POLICY_NEVER_MESSAGE });
  }
  const human = buildApprovalRequest({
    callId: request.callId,
    threadId: request.threadId,
    turnId: request.turnId,
    server: request.server,
    tool: request.tool,
    hookName: request.hookName,
    connectorName: request.connectorName,
    arguments: toolInput(),
    annotations: request.annotations,
    title: request.title,
    description: request.description,
    callDigest: callDigestOf(request),
    requestedBy: request.requestedBy,
    requesterName: request.requesterName,
    mode,
    hasSessionKey: keys.session !== undefined,
    hasPersistentKey: keys.persistent !== undefined,
    now: input.now,
    timeoutMs: state.timeoutMs,
  });
  return updatedArguments === undefined
    ? { kind: "needs_human", request: human }
    : { kind: "needs_human", request: human, updatedArguments };
}

/**
 * A session grant wins over a persistent one. A store this evaluator does not hold is asked for
 * only when its answer could still matter.
 */
function rememberedDecision(
  keys: GrantKeys,
  state: ApprovalState,
  fingerprint: string,
): Extract<DecideStep, { kind: "decided" | "needs_grants" }> | undefined {
  if (keys.session !== undefined && state.sessionGrants !== undefined) {
    if (grantApplies(state.sessionGrants.get(keys.session), fingerprint)) {
      return { kind: "decided", result: { decision: "approved_for_session", source: "session" } };
    }
  }
  const missing: GrantKeys = {
    ...(keys.session !== undefined && state.sessionGrants === undefined ? { session: keys.session } : {}),
    ...(keys.persistent !== undefined && state.persistentGrants === undefined
      ? { persistent: keys.persistent, ...(keys.everyone === undefined ? {} : { everyone: keys.everyone }) }
      : {}),
  };
  if (missing.session !== undefined || missing.persistent !== undefined) {
    return { kind: "needs_grants", keys: missing };
  }
  if (keys.persistent !== undefined && state.persistentGrants !== undefined) {
    // The requester's own grant, else one given to everyone.
    const persistent = state.persistentGrants;
    if (
      [keys.persistent, keys.everyone].some(
        (key) => key !== undefined && grantApplies(persistent.get(key), fingerprint),
      )
    ) {
      return { kind: "decided", result: { decision: "approved_always", source: "persistent" } };
    }
  }
  return undefined;
}

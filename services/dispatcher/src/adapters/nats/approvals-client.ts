/**
 * Approval for a call. A decision that needs neither a hook, a stored grant nor a human is a
 * pure function of the policy (docs/architecture.md "Every bus hop costs"), so it is settled here
 * from the dispatcher's copy of the policy the approvals service publishes; anything else goes
 * to `toolbus.approvals.decide`. A cancelled call's request put to a human is withdrawn through
 * `toolbus.approvals.cancel`.
 */

import { type Bus, tracer, withSpan } from "@toolbus/bus";
import { type EffectivePolicy, hookTimeoutMs, matchingHooks, settledByPolicy } from "@toolbus/policy";
import {
  ApprovalCancelResultSchema,
  type ApprovalDecideRequest,
  type ApprovalDecideResult,
  ApprovalDecideResultSchema,
  type PostToolUseResult,
  PostToolUseResultSchema,
  type Subjects,
  WireError,
} from "@toolbus/protocol";
import { decisionCounter } from "../../metrics.js";
import type { ApprovalsPort } from "../../ports.js";

const DECIDE_SPAN = "toolbus.approvals.decide";
/**
 * How long one decide waits for a human before the service answers `timeout` and it is sent
 * again (re-attaching to the same request): an approvals replica that dies mid-wait is noticed
 * within this, and the wait goes on on another replica.
 */
const DECIDE_WAIT_MS = 20_000;
/** Room for the round trip and the service's own reads, on top of the wait and the hooks. */
const ATTEMPT_GRACE_MS = 10_000;
/** How long `server_unavailable` answers are retried (a replica restarting, another taking over). */
const UNAVAILABLE_RETRY_MS = 5_000;
const RETRY_DELAYS_MS = [100, 250, 500, 1_000];
/** How long a withdrawal waits for the approvals service. */
const WITHDRAW_TIMEOUT_MS = 5_000;

/** What a decide answers once its call was cancelled (nobody reads it: the call was skipped). */
const CANCELLED_DECISION: ApprovalDecideResult = {
  decision: "abort",
  source: "policy",
  message: "the call was cancelled by its caller",
};

export function createApprovalsClient(deps: {
  bus: Bus;
  subjects: Subjects;
  /** The published policy as this dispatcher last read it; undefined: none (then nothing is settled here). */
  policy: () => EffectivePolicy | undefined;
  /** How long a human has to answer while no policy says (`[approvals] timeout_sec`). */
  defaultTimeoutMs: number;
}): ApprovalsPort {
  const { bus, subjects } = deps;
  // The decisions made here, without the approvals service, are counted here.
  const countDecision = decisionCounter();
  // A human may take the whole approval timeout; the request must outlive it.
  const decideTimeoutMs = () => (deps.policy()?.timeoutMs ?? deps.defaultTimeoutMs) + 10_000;
  /**
   * The time the PreToolUse and PermissionRequest hooks of a call may take at the service, so a
   * send is not given up while its hooks still run (and they never run twice). Unknown hooks: the
   * whole approval timeout.
   */
  const hookBudgetMs = (hookName: string): number => {
    const hooks = deps.policy()?.hooks;
    if (hooks === undefined) return decideTimeoutMs();
    return [
      ...matchingHooks(hooks, "PreToolUse", hookName),
      ...matchingHooks(hooks, "PermissionRequest", hookName),
    ]
      .map(hookTimeoutMs)
      .reduce((sum, ms) => sum + ms, 0);
  };
  return {
    decide(
      request: ApprovalDecideRequest,
      cancelled?: AbortSignal,
    ): ApprovalDecideResult | Promise<ApprovalDecideResult> {
      const policy = deps.policy();
      const local = policy === undefined ? undefined : settledByPolicy(policy, request, Date.now());
      if (local) {
        // Settled without I/O, so synchronously: the caller's next bus message leaves in the same write.
        const span = tracer.startSpan(DECIDE_SPAN, { attributes: { "mcp.call_id": request.callId } });
        span.end();
        countDecision(local);
        return local;
      }
      return withSpan(DECIDE_SPAN, { "mcp.call_id": request.callId }, async () => {
        // Each send waits for a human at most DECIDE_WAIT_MS; the whole approval, its timeout.
        const deadline = Date.now() + decideTimeoutMs();
        const attemptMs = DECIDE_WAIT_MS + hookBudgetMs(request.hookName) + ATTEMPT_GRACE_MS;
        // Counted from the first unavailable answer: no approvals service at all fails closed soon.
        let unavailableUntil: number | undefined;
        for (let attempt = 0; ; attempt++) {
          // The caller gave up: nobody waits for this decision, so it is not asked for again.
          if (cancelled?.aborted) return CANCELLED_DECISION;
          try {
            return await bus.request(
              subjects.approvalsDecide,
              { ...request, waitMs: DECIDE_WAIT_MS },
              ApprovalDecideResultSchema,
              { timeoutMs: Math.max(1, Math.min(attemptMs, deadline - Date.now())) },
            );
          } catch (error) {
            // Refused for what it asks (its callId is bound to another call): no retry, no run.
            if (error instanceof WireError && error.code === "bad_request") throw error;
            // Still waiting for a human, a replica that stopped or died, or none yet: the same
            // callId sent again re-attaches to the same pending request on whichever replica lives.
            const delay = RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length - 1)]!;
            const unavailable = error instanceof WireError && error.code === "server_unavailable";
            if (unavailable) unavailableUntil ??= Date.now() + UNAVAILABLE_RETRY_MS;
            else unavailableUntil = undefined;
            const again =
              (error instanceof WireError && error.code === "timeout") ||
              (unavailable && Date.now() + delay <= (unavailableUntil ?? 0));
            if (again && Date.now() + delay < deadline) {
              await new Promise((resolve) => setTimeout(resolve, delay));
              continue;
            }
            // Fail closed: no approvals service means no approval.
            const reason = error instanceof WireError ? error.message : String(error);
            const denied: ApprovalDecideResult = {
              decision: "denied",
              source: "policy",
              message: `MCP tool call could not be approved: the approvals service did not answer (${reason})`,
            };
            countDecision(denied);
            return denied;
          }
        }
      });
    },
    async withdraw(callId: string, reason: string): Promise<boolean> {
      try {
        const { cancelled } = await bus.request(
          subjects.approvalsCancel,
          { callId, reason },
          ApprovalCancelResultSchema,
          { timeoutMs: WITHDRAW_TIMEOUT_MS },
        );
        return cancelled;
      } catch {
        return false;
      }
    },
    hasPostToolUse(hookName: string): boolean {
      // Without a copy of the policy we cannot rule hooks out, so ask the service.
      const hooks = deps.policy()?.hooks;
      return hooks === undefined || matchingHooks(hooks, "PostToolUse", hookName).length > 0;
    },
    async postToolUse(request): Promise<PostToolUseResult> {
      try {
        return await bus.request(subjects.approvalsPostToolUse, request, PostToolUseResultSchema, {
          timeoutMs: 60_000,
        });
      } catch (error) {
        // No approvals service and no policy saying there are hooks: nothing to run.
        if (
          error instanceof WireError &&
          error.code === "server_unavailable" &&
          deps.policy() === undefined
        ) {
          return { block: false };
        }
        const reason = error instanceof Error ? error.message : String(error);
        return { block: true, reason: `PostToolUse hooks could not run: ${reason}` };
      }
    },
  };
}

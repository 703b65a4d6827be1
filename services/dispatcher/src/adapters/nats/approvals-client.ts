/**
 * Approval for a call. A decision that needs neither a hook, a stored grant nor a human is a
 * pure function of the policy (ARCHITECTURE.md "Every bus hop costs"), so it is settled here
 * with the approvals core; anything else goes to `toolbus.approvals.decide`.
 */

import {
  decide,
  decisionCounter,
  type HooksConfig,
  matchingHooks,
  resolveApprovalMode,
} from "@toolbus/approvals";
import { type Bus, tracer, withSpan } from "@toolbus/bus";
import type { ToolbusConfig } from "@toolbus/config";
import {
  type ApprovalDecideRequest,
  type ApprovalDecideResult,
  ApprovalDecideResultSchema,
  type PostToolUseResult,
  PostToolUseResultSchema,
  type Subjects,
  WireError,
} from "@toolbus/protocol";
import type { ApprovalsPort } from "../../handlers/dispatch-call.js";

const DECIDE_SPAN = "toolbus.approvals.decide";
/** How long `server_unavailable` answers are retried (a replica restarting, another taking over). */
const UNAVAILABLE_RETRY_MS = 5_000;
const RETRY_DELAYS_MS = [100, 250, 500, 1_000];

export function createApprovalsClient(deps: {
  bus: Bus;
  subjects: Subjects;
  config: ToolbusConfig;
  /** Parsed hooks file, or undefined when it could not be read here (then nothing is settled locally). */
  hooks: HooksConfig | undefined;
}): ApprovalsPort {
  const { bus, subjects, config, hooks } = deps;
  // The decisions made here, without the approvals service, are counted here.
  const countDecision = decisionCounter();
  // A human may take the whole approval timeout; the request must outlive it.
  const decideTimeoutMs = config.approvals.timeoutMs + 10_000;
  /** The decision when the policy alone settles it (no hook, grant or human needed), else undefined. */
  const decideLocally = (request: ApprovalDecideRequest, hooks: HooksConfig) => {
    const server = config.mcpServers[request.server];
    const mode = resolveApprovalMode(
      server?.tools[request.tool]?.approvalMode,
      server?.defaultToolsApprovalMode,
    );
    const step = decide(
      { request, mode, now: Date.now() },
      { policy: "on-request", hooks, timeoutMs: config.approvals.timeoutMs },
    );
    return step.kind === "decided" ? step.result : undefined;
  };
  return {
    decide(request: ApprovalDecideRequest): ApprovalDecideResult | Promise<ApprovalDecideResult> {
      const local = hooks ? decideLocally(request, hooks) : undefined;
      if (local) {
        // Settled without I/O, so synchronously: the caller's next bus message leaves in the same write.
        const span = tracer.startSpan(DECIDE_SPAN, { attributes: { "mcp.call_id": request.callId } });
        span.end();
        countDecision(local);
        return local;
      }
      return withSpan(DECIDE_SPAN, { "mcp.call_id": request.callId }, async () => {
        // Counted from the first unavailable answer, not the first send: a decide that waited
        // minutes for a human before its replica stopped still gets its retries.
        let retryUntil: number | undefined;
        for (let attempt = 0; ; attempt++) {
          try {
            return await bus.request(subjects.approvalsDecide, request, ApprovalDecideResultSchema, {
              timeoutMs: decideTimeoutMs,
            });
          } catch (error) {
            // Refused for what it asks (its callId is bound to another call): no retry, no run.
            if (error instanceof WireError && error.code === "bad_request") throw error;
            // A replica that stops (or none yet) answers server_unavailable: the same callId sent
            // again re-attaches to the same pending request on another replica.
            const delay = RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length - 1)]!;
            const unavailable = error instanceof WireError && error.code === "server_unavailable";
            if (unavailable) retryUntil ??= Date.now() + UNAVAILABLE_RETRY_MS;
            if (unavailable && Date.now() + delay <= (retryUntil ?? 0)) {
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
    hasPostToolUse(hookName: string): boolean {
      // Without a readable hooks file we cannot rule hooks out, so ask the service.
      return hooks === undefined || matchingHooks(hooks, "PostToolUse", hookName).length > 0;
    },
    async postToolUse(request): Promise<PostToolUseResult> {
      try {
        return await bus.request(subjects.approvalsPostToolUse, request, PostToolUseResultSchema, {
          timeoutMs: 60_000,
        });
      } catch (error) {
        if (error instanceof WireError && error.code === "server_unavailable" && hooks === undefined) {
          return { block: false };
        }
        const reason = error instanceof Error ? error.message : String(error);
        return { block: true, reason: `PostToolUse hooks could not run: ${reason}` };
      }
    },
  };
}

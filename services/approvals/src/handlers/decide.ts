/**
 * `toolbus.approvals.decide`: runs the core's step machine, supplying what each step asks for —
 * hook verdicts, stored grants, a human. A call that already has a request put to a human (a retry
 * by the dispatcher, on this replica or another) re-attaches to it before anything else runs, so
 * hooks are not re-run and no one is asked twice.
 */
import type { Logger } from "@toolbus/bus";
import {
  type ApprovalState,
  approvalRequestId,
  combineHookOutcomes,
  type DecideRequest,
  type DecideResult,
  decide,
  type Grant,
  grantKeys,
  type HookVerdicts,
  interpretHookOutcome,
} from "../core/index.js";
import type { ApprovalPorts } from "../ports.js";
import { askHuman, awaitDecision } from "./human-step.js";

export interface DecideContext {
  logger: Logger;
  /** Aborted when the bus gives up on in-flight work. */
  signal?: AbortSignal;
}

export async function handleDecide(
  request: DecideRequest,
  ports: ApprovalPorts,
  ctx: DecideContext,
): Promise<DecideResult> {
  const signal = ctx.signal === undefined ? ports.closing : AbortSignal.any([ports.closing, ctx.signal]);
  const existing = await ports.pending.find(approvalRequestId(request.callId));
  if (existing !== undefined) {
    ctx.logger.info(
      { requestId: existing.request.requestId, state: existing.state },
      "decide re-attached to the call's approval request",
    );
    return awaitDecision(existing.request.requestId, ports, signal);
  }

  const mode = ports.modeOf(request.server, request.tool);
  const state: ApprovalState = { policy: ports.policy, hooks: ports.hooks, timeoutMs: ports.timeoutMs };
  const verdicts: HookVerdicts = {};
  for (;;) {
    const step = decide({ request, mode, now: ports.now() }, state, verdicts);
    switch (step.kind) {
      case "decided":
        ctx.logger.info(
          { decision: step.result.decision, source: step.result.source, mode },
          `decided ${step.result.decision} (${step.result.source})`,
        );
        return step.result;
      case "needs_hooks": {
        const runs = await ports.hookRunner.run(step.hooks, step.payload, signal);
        const outcomes = runs.map((run) => interpretHookOutcome(step.event, run));
        for (const outcome of outcomes) {
          if (outcome.kind === "none" && outcome.warning !== undefined) ctx.logger.warn(outcome.warning);
        }
        verdicts[step.event] = combineHookOutcomes(outcomes);
        break;
      }
      case "needs_grants": {
        const [session, persistent] = await Promise.all([
          lookup(ports.sessionGrants, step.keys.session),
          lookup(ports.persistentGrants, step.keys.persistent),
        ]);
        state.sessionGrants = session;
        state.persistentGrants = persistent;
        break;
      }
      case "needs_human":
        return askHuman(
          {
            request: step.request,
            mode,
            keys: grantKeys(mode, request),
            fingerprint: request.fingerprint,
            ...(step.updatedArguments === undefined ? {} : { updatedArguments: step.updatedArguments }),
          },
          ports,
          { logger: ctx.logger, signal },
        );
    }
  }
}

/** A one-key view of a store; a key the core did not ask for looks up nothing. */
async function lookup(
  store: ApprovalPorts["sessionGrants"],
  key: string | undefined,
): Promise<ReadonlyMap<string, Grant>> {
  if (key === undefined) return new Map();
  const grant = await store.get(key);
  return grant === undefined ? new Map() : new Map([[key, grant]]);
}

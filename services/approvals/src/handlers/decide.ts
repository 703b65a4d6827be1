/**
 * `toolbus.approvals.decide`: runs the core's step machine, supplying what each step asks for —
 * hook verdicts, stored grants, a human.
 *
 * A call the configuration settles on its own (no PreToolUse hook, and mode `approve`,
 * annotations or policy `never`) is answered from the core's first step, before any I/O.
 * Otherwise, before the first hook or grant lookup, the call's request put to a human is looked
 * for (with the grants, in parallel): a retry by the dispatcher, on this replica or another,
 * re-attaches to it, so hooks are not re-run, no one is asked twice, and a grant given since does
 * not overrule the human's answer to this call. Only a retry of the same call does: a request
 * bound to another call's digest (the callId reused for other arguments or another tool) is
 * refused as `bad_request`, and nothing runs.
 *
 * Why answering the first step unread is safe for retries: that step reads only the request and
 * this replica's configuration, so a retry of a call that was put to a human takes the same path
 * again and reaches the lookup — unless the configuration changed in between (the tool's mode, the
 * hooks or the policy) so that the call no longer needs anyone. Then the retry answers what the
 * configuration now says, as a dispatcher evaluating the core locally with that configuration
 * already does; the old request stays in the inbox until it is answered (to no effect) or expires.
 */
import type { Logger } from "@toolbus/bus";
import {
  type ApprovalMode,
  type ApprovalState,
  approvalRequestId,
  callDigestOf,
  type DecideRequest,
  type DecideResult,
  decide,
  type Grant,
  grantKeys,
  type HookVerdicts,
} from "@toolbus/policy";
import { combineHookOutcomes, interpretHookOutcome } from "../core/index.js";
import type { ApprovalPorts, GrantStore } from "../ports.js";
import {
  askHuman,
  awaitDecision,
  REATTACHED,
  refuseAnotherCall,
  type WatchedRequest,
  watchRequest,
} from "./human-step.js";

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
  const mode = ports.modeOf(request.server, request.tool);
  const state: ApprovalState = {
    policy: ports.policy,
    permissionProfile: ports.permissionProfile,
    hooks: ports.hooks,
    timeoutMs: ports.timeoutMs,
  };
  const verdicts: HookVerdicts = {};
  const requestId = approvalRequestId(request.callId);
  // Taken only once a stored request is looked for: a call the configuration settles needs none.
  let digest: string | undefined;
  const callDigest = () => {
    digest ??= callDigestOf(request);
    return digest;
  };
  let looked = false;
  let signal: AbortSignal | undefined;
  const waitSignal = () => {
    signal ??= ctx.signal === undefined ? ports.closing : AbortSignal.any([ports.closing, ctx.signal]);
    return signal;
  };
  // A human's wait, bounded by the caller's `waitMs` (hooks are not: they have their own timeouts).
  const humanWaitSignal = () =>
    request.waitMs === undefined
      ? waitSignal()
      : AbortSignal.any([waitSignal(), AbortSignal.timeout(request.waitMs)]);
  const reattach = (existing: WatchedRequest) => {
    refuseAnotherCall(existing, request.callId, callDigest());
    ctx.logger.info({ requestId, state: existing.record.state }, REATTACHED);
    return awaitDecision(requestId, ports, humanWaitSignal(), existing);
  };

  for (;;) {
    const step = decide({ request, mode, now: ports.now() }, state, verdicts);
    switch (step.kind) {
      case "decided":
        return decided(step.result, mode, ctx.logger, looked);
      case "needs_hooks": {
        if (!looked) {
          looked = true;
          const existing = await watchRequest(requestId, ports);
          if (existing !== undefined) return reattach(existing);
        }
        const runs = await ports.hookRunner.run(step.hooks, step.payload, waitSignal());
        const outcomes = runs.map((run) => interpretHookOutcome(step.event, run));
        for (const outcome of outcomes) {
          if (outcome.kind === "none" && outcome.warning !== undefined) ctx.logger.warn(outcome.warning);
        }
        verdicts[step.event] = combineHookOutcomes(outcomes);
        break;
      }
      case "needs_grants": {
        const [existing, grants] = await Promise.all([
          looked ? undefined : watchRequest(requestId, ports),
          // Settled either way: a call that re-attaches does not need its grants, nor fail on them.
          Promise.all([
            lookup(ports.sessionGrants, step.keys.session),
            lookup(ports.persistentGrants, step.keys.persistent, step.keys.everyone),
          ]).then(
            (found) => ({ found }),
            (error: unknown) => ({ error }),
          ),
        ]);
        looked = true;
        if (existing !== undefined) return reattach(existing);
        if ("error" in grants) throw grants.error;
        [state.sessionGrants, state.persistentGrants] = grants.found;
        break;
      }
      case "needs_human":
        // Not looked for yet when nothing came before: the insert finds an existing request itself.
        return askHuman(
          {
            request: step.request,
            mode,
            keys: grantKeys(mode, request),
            fingerprint: request.fingerprint,
            callDigest: callDigest(),
            ...(step.updatedArguments === undefined ? {} : { updatedArguments: step.updatedArguments }),
          },
          ports,
          { logger: ctx.logger, signal: humanWaitSignal() },
        );
    }
  }
}

/**
 * Logs the decision: at info when hooks or stored grants took part, at debug when the configuration
 * alone settled it (what a dispatcher evaluating the core locally decides without a word).
 */
function decided(result: DecideResult, mode: ApprovalMode, logger: Logger, consulted: boolean): DecideResult {
  logger[consulted ? "info" : "debug"](
    { decision: result.decision, source: result.source, mode },
    `decided ${result.decision} (${result.source})`,
  );
  return result;
}

/** A view of a store holding the keys the core asked for; a key it did not ask for looks up nothing. */
async function lookup(
  store: GrantStore,
  ...keys: Array<string | undefined>
): Promise<ReadonlyMap<string, Grant>> {
  const found = new Map<string, Grant>();
  for (const key of keys) {
    if (key === undefined) continue;
    const grant = await store.get(key);
    if (grant !== undefined) found.set(key, grant);
  }
  return found;
}

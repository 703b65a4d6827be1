/**
 * The effective policy as data: everything a decision reads that is not a stored grant or a
 * human — the deployment's policy and permission profile, each server's modes, the hooks and the
 * human's timeout. The approvals service publishes it (KV `<prefix>_approval_policy`, key
 * `APPROVAL_POLICY_KEY`); the dispatcher follows it and settles locally what it alone settles.
 */
import { z } from "zod";
import { approvalModeOf, ServerModesSchema } from "./approval-mode.js";
import { ApprovalPolicySchema, PermissionProfileSchema } from "./approval-policy.js";
import { decide } from "./decide.js";
import { HookEventsSchema } from "./hooks-file.js";
import type { DecideRequest, DecideResult } from "./types.js";

export const EffectivePolicySchema = z.object({
  policy: ApprovalPolicySchema,
  permissionProfile: PermissionProfileSchema,
  /** Modes by server name; a server not listed is `auto` for every tool. */
  servers: z.record(z.string(), ServerModesSchema).default({}),
  hooks: HookEventsSchema.prefault({}),
  /** How long a human has to answer. */
  timeoutMs: z.int().positive(),
});
export type EffectivePolicy = z.output<typeof EffectivePolicySchema>;
export type EffectivePolicyInput = z.input<typeof EffectivePolicySchema>;

/**
 * The decision when the policy alone settles the call — no hook to run, no grant to read, no
 * human to ask — else undefined: then only the approvals service can decide.
 */
export function settledByPolicy(
  policy: EffectivePolicy,
  request: DecideRequest,
  now: number,
): DecideResult | undefined {
  const step = decide(
    { request, mode: approvalModeOf(policy.servers, request.server, request.tool), now },
    {
      policy: policy.policy,
      permissionProfile: policy.permissionProfile,
      hooks: policy.hooks,
      timeoutMs: policy.timeoutMs,
    },
  );
  return step.kind === "decided" ? step.result : undefined;
}

/**
 * Publishes the effective approval policy (@toolbus/policy) to KV `<prefix>_approval_policy`,
 * key `APPROVAL_POLICY_KEY`: the entry's revision is the policy's. The dispatchers follow it and
 * settle locally the calls the policy alone settles. The same policy is not written again, so
 * replicas started with one configuration leave the revision as it is.
 */
import type { KV } from "@nats-io/kv";
import type { EffectivePolicy } from "@toolbus/policy";
import { APPROVAL_POLICY_KEY } from "@toolbus/protocol";

/** The revision the policy has in the bucket once this returns. */
export async function publishPolicy(kv: KV, policy: EffectivePolicy): Promise<number> {
  const text = JSON.stringify(policy);
  const current = await kv.get(APPROVAL_POLICY_KEY);
  if (current?.operation === "PUT" && current.string() === text) return current.revision;
  return kv.put(APPROVAL_POLICY_KEY, text);
}

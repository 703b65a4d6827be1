/**
 * A stand-in for the approvals service at its KV seam, for stacks that run no approvals service:
 * publishes the effective policy the approvals service would publish for a toolbus.toml (its
 * modes, `[approvals]` hooks file and timeout; policy `on-request`, profile `restricted`), so a
 * dispatcher settles what that policy alone settles, as it would beside a real approvals service.
 */
import { readFile } from "node:fs/promises";
import { dirname } from "node:path";
import { Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import { loadToolbusConfig } from "@toolbus/config";
import { type EffectivePolicy, EffectivePolicySchema, parseHooksFile, serverModesOf } from "@toolbus/policy";
import { APPROVAL_POLICY_KEY, internalSubjects } from "@toolbus/protocol";

/** The policy for the toolbus.toml at `configPath`; throws on a bad config or hooks file. */
export async function approvalPolicyOf(configPath: string): Promise<EffectivePolicy> {
  const config = await loadToolbusConfig({ path: configPath, env: {}, cwd: dirname(configPath) });
  let hooks: unknown;
  if (config.approvals.hooksPath !== undefined) {
    const parsed = parseHooksFile(JSON.parse(await readFile(config.approvals.hooksPath, "utf8")));
    if (!parsed.ok) throw new Error(`${config.approvals.hooksPath}: ${parsed.message}`);
    hooks = parsed.value;
  }
  return EffectivePolicySchema.parse({
    servers: serverModesOf(config.mcpServers),
    hooks,
    timeoutMs: config.approvals.timeoutMs,
  });
}

/** Puts `policy` where the approvals service of `prefix` publishes it; answers its revision. */
export async function publishApprovalPolicy(
  nc: NatsConnection,
  prefix: string,
  policy: EffectivePolicy,
): Promise<number> {
  const kv = await new Kvm(nc).create(internalSubjects(prefix).kv.approvalPolicy, { history: 1 });
  return kv.put(APPROVAL_POLICY_KEY, JSON.stringify(policy));
}

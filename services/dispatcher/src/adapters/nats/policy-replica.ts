/**
 * The dispatcher's copy of the effective approval policy, kept by following KV
 * `<prefix>_approval_policy`, which the approvals service publishes: calls the policy alone
 * settles are decided here, without a bus hop. Without a copy — nothing published yet, or an
 * entry this version cannot read — every approval goes to the approvals service.
 */
import type { JetStreamManager } from "@nats-io/jetstream";
import type { KV } from "@nats-io/kv";
import { followKv, type Logger } from "@toolbus/bus";
import { type EffectivePolicy, EffectivePolicySchema } from "@toolbus/policy";
import { APPROVAL_POLICY_KEY } from "@toolbus/protocol";

export interface PolicyCopy {
  readonly policy: EffectivePolicy;
  /** The KV revision of the entry it was read from. */
  readonly revision: number;
}

export class PolicyReplica {
  private copy: PolicyCopy | undefined;
  private stopWatch: (() => void) | undefined;

  private constructor(private readonly logger: Logger) {}

  /** Reads the published policy, if any, then follows each change. */
  static async open(deps: { kv: KV; jsm: JetStreamManager; bucket: string; logger: Logger }) {
    const replica = new PolicyReplica(deps.logger);
    const { stop } = await followKv({
      ...deps,
      apply: (change) => {
        if (change.key === APPROVAL_POLICY_KEY)
          replica.apply(change.operation, change.value, change.revision);
      },
      ended: (error) => {
        if (error !== undefined) {
          deps.logger.error({ err: error }, "the approval policy watch failed; approvals use the last copy");
        }
      },
    });
    replica.stopWatch = stop;
    return replica;
  }

  /** The policy as last published, or undefined when there is none this dispatcher can use. */
  get current(): PolicyCopy | undefined {
    return this.copy;
  }

  stop(): void {
    this.stopWatch?.();
  }

  private apply(operation: string, text: string, revision: number): void {
    // A change read again after the first read (followKv may repeat it) is no news.
    if (this.copy !== undefined && revision <= this.copy.revision) return;
    if (operation !== "PUT") {
      this.copy = undefined;
      this.logger.warn(
        { revision },
        "the approval policy was deleted; every approval goes to the approvals service",
      );
      return;
    }
    const parsed = EffectivePolicySchema.safeParse(parseJson(text));
    if (!parsed.success) {
      this.copy = undefined;
      this.logger.warn(
        { revision, problem: parsed.error.issues[0]?.message },
        "the published approval policy is not one this dispatcher reads; every approval goes to the approvals service",
      );
      return;
    }
    this.copy = { policy: parsed.data, revision };
    this.logger.info({ policyRevision: revision }, "following the approval policy");
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

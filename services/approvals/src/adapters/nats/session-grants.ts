/**
 * "Allow for this session" grants, in the JetStream KV bucket `<prefix>_approval_grants`: key =
 * the core's session key (`<thread>.<server>.<connector>.<tool>`), value `{fingerprint, grantedAt,
 * requestId}`, no TTL: a thread's grants are deleted when its session ends (`forgetPrefix`). A
 * dispatcher may read the same bucket to decide remembered calls locally.
 */
import type { KV } from "@nats-io/kv";
import type { Grant } from "@toolbus/policy";
import { z } from "zod";
import type { GrantRecord, SessionGrantStore } from "../../ports.js";

const StoredGrantSchema = z.object({ fingerprint: z.string() });

export class KvSessionGrants implements SessionGrantStore {
  readonly #kv: KV;

  constructor(kv: KV) {
    this.#kv = kv;
  }

  async get(key: string): Promise<Grant | undefined> {
    const entry = await this.#kv.get(key);
    if (entry === null || entry.operation !== "PUT") return undefined;
    const parsed = StoredGrantSchema.safeParse(safeJson(entry.string()));
    // An entry this code cannot read grants nothing: the human is asked again.
    return parsed.success ? { fingerprint: parsed.data.fingerprint } : undefined;
  }

  forgetPrefix(prefix: string): Promise<number> {
    return forgetKeys(this.#kv, prefix);
  }

  async put(key: string, grant: GrantRecord): Promise<void> {
    await this.#kv.put(
      key,
      JSON.stringify({
        fingerprint: grant.fingerprint,
        grantedAt: grant.grantedAt,
        requestId: grant.requestId,
      }),
    );
  }
}

/** The keys listed under one prefix are a thread's grants: one per tool it allowed, so few. */
export async function forgetKeys(kv: KV, prefix: string): Promise<number> {
  const keys: string[] = [];
  for await (const key of await kv.keys(`${prefix}>`)) keys.push(key);
  await Promise.all(keys.map((key) => kv.delete(key)));
  return keys.length;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

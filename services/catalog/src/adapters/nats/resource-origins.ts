/**
 * Where resource URIs came from (McpResourceOrigin): recorded per tool call from the
 * resource links and embedded resources in its result, kept in a KV bucket with a TTL, and
 * checked when a read names `originCallId`.
 */
import type { KV } from "@nats-io/kv";
import type { McpResourceOrigin } from "@toolbus/protocol";
import type { ResourceOriginStore } from "../../ports.js";

export class ResourceOrigins implements ResourceOriginStore {
  constructor(private readonly kv: KV) {}

  async record(origins: McpResourceOrigin[]): Promise<void> {
    const first = origins[0];
    if (!first) return;
    await this.kv.put(originKey(first.callId), JSON.stringify(origins));
  }

  async forCall(callId: string): Promise<McpResourceOrigin[]> {
    const entry = await this.kv.get(originKey(callId));
    return entry && entry.operation === "PUT" ? entry.json<McpResourceOrigin[]>() : [];
  }
}

/** KV keys allow a limited alphabet; call ids do not, so they are hex-encoded. */
function originKey(callId: string): string {
  return `call.${Buffer.from(callId, "utf8").toString("hex")}`;
}

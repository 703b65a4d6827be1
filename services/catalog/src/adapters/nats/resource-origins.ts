/**
 * Where resource URIs came from (McpResourceOrigin): recorded per tool call from the
 * resource links and embedded resources in its result, kept in a KV bucket with a TTL under the
 * server that answered the call (where only its connector may write), and checked when a read
 * names `originCallId`.
 */
import type { KV } from "@nats-io/kv";
import { type McpResourceOrigin, serverKeyPrefix } from "@toolbus/protocol";
import type { ResourceOriginStore } from "../../ports.js";

export class ResourceOrigins implements ResourceOriginStore {
  constructor(private readonly kv: KV) {}

  async record(origins: McpResourceOrigin[]): Promise<void> {
    const first = origins[0];
    if (!first) return;
    await this.kv.put(originKey(first.server, first.callId), JSON.stringify(origins));
  }

  async forCall(server: string, callId: string): Promise<McpResourceOrigin[]> {
    const entry = await this.kv.get(originKey(server, callId));
    return entry && entry.operation === "PUT" ? entry.json<McpResourceOrigin[]>() : [];
  }
}

/** KV keys allow a limited alphabet; call ids do not, so they are hex-encoded. */
function originKey(server: string, callId: string): string {
  return `${serverKeyPrefix(server)}call.${Buffer.from(callId, "utf8").toString("hex")}`;
}

/**
 * Where resource URIs came from (McpResourceOrigin): recorded per tool call from the
 * resource links and embedded resources in its result, kept in a KV bucket with a TTL, and
 * checked when a read names `originCallId`.
 */
import type { KV } from "@nats-io/kv";
import type { McpResourceOrigin } from "@toolbus/protocol";

/** Resource URIs a call result points at: `resource_link` blocks and embedded resources. */
export function resourceUris(result: Record<string, unknown>): string[] {
  const content = Array.isArray(result.content) ? result.content : [];
  const uris: string[] = [];
  for (const block of content as Array<Record<string, unknown>>) {
    if (block?.type === "resource_link" && typeof block.uri === "string") uris.push(block.uri);
    const embedded =
      block?.type === "resource" ? (block.resource as { uri?: unknown } | undefined) : undefined;
    if (typeof embedded?.uri === "string") uris.push(embedded.uri);
  }
  return uris;
}

export class ResourceOrigins {
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

/**
 * Which instance of a server isolated per principal or per session runs a call, and which
 * instance makes room when all are running. One instance per key: a server's state, and the
 * requests it sends during a call (elicitation, sampling), then belong to one caller.
 */
import type { StdioIsolation } from "@toolbus/config";

/** Who asked for a call without naming a principal: an open edge, the CLI, an agent. */
export const NO_PRINCIPAL_KEY = "(no principal)";

/**
 * The instance key of a call: its requester per principal (calls that name none share one);
 * its thread per session (the MCP session, or the thread its client named; a call in none
 * gets an instance of its own).
 */
export function instanceKey(
  by: StdioIsolation["by"],
  call: { callId: string; threadId?: string; requestedBy?: string },
): string {
  if (by === "principal") return call.requestedBy ?? NO_PRINCIPAL_KEY;
  return call.threadId ?? `call:${call.callId}`;
}

export interface InstanceUse {
  key: string;
  /** Calls running on it now. */
  active: number;
  /** When its last call ended (ms; any clock). */
  lastUsed: number;
}

/**
 * Where a new key's instance goes when `running` instances already run: nowhere to make room
 * (`room`), the least recently used idle instance to stop first (`evict`), or none free
 * (`full`, every instance has a call running).
 */
export function makeRoom(
  running: readonly InstanceUse[],
  maxInstances: number,
): { kind: "room" } | { kind: "evict"; key: string } | { kind: "full" } {
  if (running.length < maxInstances) return { kind: "room" };
  const idle = running.filter((use) => use.active === 0).sort((a, b) => a.lastUsed - b.lastUsed);
  const oldest = idle[0];
  return oldest === undefined ? { kind: "full" } : { kind: "evict", key: oldest.key };
}

/** The refusal of a call whose key finds every instance busy. */
export function poolFullMessage(server: string, isolation: StdioIsolation): string {
  const per = isolation.by === "principal" ? "principal" : "session";
  return (
    `MCP server '${server}' runs one instance per ${per}, and all ${isolation.maxInstances} are running calls; ` +
    `try again when one ends, or raise max_instances for '${server}'`
  );
}

/**
 * What the provisioner sizes the JetStream assets by, from the tables of toolbus.toml and the
 * environment variables that override them (the same ones the services read): the `[bus]`
 * limits, the memory service's consumer, and how long an unused gateway session lives.
 */
import type { Env } from "./http-headers.js";
import { type BusConfig, DEFAULT_MEMORY_CONFIG, type MemoryConfig } from "./tables.js";

/** How long an MCP session stays without a request before it expires (`TOOLBUS_GATEWAY_SESSION_TTL_SEC`). */
export const DEFAULT_SESSION_IDLE_TTL_MS = 30 * 60_000;

export interface ProvisionInputs {
  events: { maxAgeMs: number; maxBytes: number };
  memory: { maxAgeMs: number; maxBytes: number };
  largeReplies: { maxAgeMs: number; maxBytes: number };
  gatewaySessionTtlMs: number;
  memoryConsumer: { ackWaitMs: number; maxAckPending: number };
}

/** A whole number from an environment variable, or undefined when unset or not one. */
function envInteger(env: Env, name: string): number | undefined {
  const value = env[name];
  if (value === undefined || value === "") return undefined;
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

export function provisionInputs(tables: { bus: BusConfig; memory: MemoryConfig }, env: Env): ProvisionInputs {
  const batchSize =
    envInteger(env, "MEMORY_BATCH_SIZE") ?? tables.memory.batchSize ?? DEFAULT_MEMORY_CONFIG.batchSize;
  const sessionTtlSec = envInteger(env, "TOOLBUS_GATEWAY_SESSION_TTL_SEC");
  return {
    events: { ...tables.bus.events },
    memory: { ...tables.bus.memory },
    largeReplies: { ...tables.bus.largeReplies },
    gatewaySessionTtlMs: sessionTtlSec === undefined ? DEFAULT_SESSION_IDLE_TTL_MS : sessionTtlSec * 1000,
    memoryConsumer: {
      ackWaitMs: envInteger(env, "MEMORY_ACK_WAIT_MS") ?? tables.memory.ackWaitMs,
      // At least a few batches: the server never hands out more unacknowledged messages than this.
      maxAckPending: Math.max(1_000, batchSize * 4),
    },
  };
}

/**
 * What binds an approval to the call it approves (docs/architecture.md "Trust boundary"): a digest of
 * the call's server, raw tool name, tool fingerprint and arguments. A request put to a human is
 * stored with it, and a `decide` for the same callId whose call digests differently is refused
 * with `callIdReusedMessage` instead of re-attaching: a callId reused for another call (after a
 * restart, or on another dispatcher replica) never runs on an old approval. The dispatcher's
 * memory of repeated callIds refuses the same way, so both read alike to a caller.
 */
import { hash } from "node:crypto";
import { acquireWriter, releaseWriter } from "./naming/canonical-json.js";
import type { JsonValue } from "./schemas/primitives.js";

/** The call an approval is bound to, as the caller asked to run it (before any hook rewrote it). */
export interface ApprovalBinding {
  server: string;
  /** The raw tool name (the route the server is called with). */
  tool: string;
  /** The tool's fingerprint (docs/contract.md "Catalog"). */
  fingerprint: string;
  /** The parsed arguments; `null` when there were none. */
  arguments: JsonValue;
}

/** Hex SHA-256 of the canonical JSON of `value` (keys sorted at every depth, no whitespace). */
export function canonicalDigest(value: unknown): string {
  const writer = acquireWriter();
  try {
    writer.value(value);
    return hash("sha256", writer.bytes(), "hex");
  } finally {
    releaseWriter(writer);
  }
}

/**
 * `sha256(canonicalJson({server, tool, fingerprint, arguments}))`, hex: equal for two calls
 * exactly when they run the same tool version with the same arguments (key order aside).
 */
export function approvalCallDigest(call: ApprovalBinding): string {
  return canonicalDigest({
    server: call.server,
    tool: call.tool,
    fingerprint: call.fingerprint,
    arguments: call.arguments,
  });
}

/** The refusal of a callId already used for a different call (a `bad_request`). */
export function callIdReusedMessage(callId: string): string {
  return `callId ${JSON.stringify(callId)} was already used for a different tool call (another server, tool, tool version or arguments), so this call did not run; send it with a new callId`;
}

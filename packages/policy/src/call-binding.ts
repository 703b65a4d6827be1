/**
 * A request put to a human answers only the call it was put for (docs/architecture.md "Trust
 * boundary"). It is stored with its call's digest — server, raw tool, fingerprint and the
 * arguments as the caller sent them, before any PreToolUse rewrite — and a decide for the same
 * callId re-attaches to it only when its own call digests the same (a retry); anything else is
 * refused, so a reused callId never runs on another call's approval nor skips its own hooks.
 */
import { approvalCallDigest, callIdReusedMessage } from "@toolbus/protocol";
import type { DecideRequest } from "./types.js";

/** The digest a decide request's approval is bound to. */
export function callDigestOf(request: DecideRequest): string {
  return approvalCallDigest({
    server: request.server,
    tool: request.tool,
    fingerprint: request.fingerprint,
    arguments: request.arguments,
  });
}

/**
 * Why the request stored for `callId` (bound to `stored`) cannot answer a call digesting to
 * `digest`, or undefined when it is that call's. A request stored before requests were bound
 * (no digest) answers no call: nothing tells whether it is the same one.
 */
export function bindingMismatch(
  callId: string,
  stored: string | undefined,
  digest: string,
): string | undefined {
  if (stored === digest) return undefined;
  if (stored === undefined) {
    return `callId ${JSON.stringify(callId)} has an approval request stored before requests were bound to their call, so it cannot be told apart from another call; this call did not run; send it with a new callId`;
  }
  return callIdReusedMessage(callId);
}

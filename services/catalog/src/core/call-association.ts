/**
 * Which of a server's tool calls in flight a request or notification from that server belongs
 * to (an elicitation, a sampling request, a log message). One connection serves every client of
 * toolbus, so "the call running now" is not an answer when two clients call the same server:
 *
 * 1. The request it was sent in the context of (over streamable HTTP, the tools/call whose
 *    response stream carried it): that call, or none if that request is not a call in flight.
 * 2. Else its `_meta.progressToken`, the token toolbus sent with the call (a stdio server has no
 *    other way to say), or its `_meta.callId` (toolbus puts the call id in every call's `_meta`):
 *    that call, or none if it names no call in flight.
 * 3. Else, when exactly one call is in flight: that one.
 * 4. Else none: a request is refused with a JSON-RPC error saying why, a log message is dropped.
 */

export interface CallInFlight {
  /** The progress token toolbus sent in the call's `_meta`. */
  progressToken: string;
  /** The JSON-RPC id of the call's `tools/call`, once sent. */
  requestId?: string | number;
  /** The toolbus call id, as sent in the call's `_meta.callId`. */
  callId?: string;
}

export interface RelationHint {
  /** The request the message was sent in the context of, when the transport tells (streamable HTTP). */
  relatedRequestId?: string | number;
  /** The message's own `params._meta`. */
  meta?: Record<string, unknown>;
}

export type Association<T> = { kind: "call"; call: T } | { kind: "none"; why: string };

export function associateCall<T extends CallInFlight>(
  calls: Iterable<T>,
  hint: RelationHint,
): Association<T> {
  const running = [...calls];
  if (hint.relatedRequestId !== undefined) {
    const call = running.find((c) => c.requestId !== undefined && c.requestId === hint.relatedRequestId);
    return call
      ? { kind: "call", call }
      : {
          kind: "none",
          why: `it was sent in the context of request ${JSON.stringify(hint.relatedRequestId)}, which is not one of this server's running tool calls`,
        };
  }
  const token = hint.meta?.progressToken;
  if (typeof token === "string" || typeof token === "number") {
    const call = running.find((c) => c.progressToken === String(token));
    return call
      ? { kind: "call", call }
      : {
          kind: "none",
          why: `its _meta.progressToken ${JSON.stringify(token)} names none of this server's running tool calls`,
        };
  }
  const callId = hint.meta?.callId;
  if (typeof callId === "string") {
    const call = running.find((c) => c.callId === callId);
    return call
      ? { kind: "call", call }
      : {
          kind: "none",
          why: `its _meta.callId ${JSON.stringify(callId)} names none of this server's running tool calls`,
        };
  }
  if (running.length === 1) return { kind: "call", call: running[0]! };
  if (running.length === 0) return { kind: "none", why: "no tool call of this server is running now" };
  return {
    kind: "none",
    why:
      `${running.length} of this server's tool calls are running and it does not say which one it belongs to ` +
      "(send it in the context of its tools/call request, or with that call's progressToken in its _meta)",
  };
}

/** The JSON-RPC error message a server gets for a request that belongs to no call. */
export function unrelatedRequestMessage(method: string, why: string): string {
  return `toolbus relays ${method} only to the MCP client that made the tool call it belongs to; ${why}`;
}

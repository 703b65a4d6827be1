/**
 * The tool calls in flight on one MCP connection, and which of them each thing the server sends
 * belongs to (core/call-association.ts): progress by its token; log messages, elicitations and
 * sampling requests by the request they were sent for (marked on HTTP response streams,
 * core/related-request.ts), their `_meta`, or the one call running.
 */
import { randomUUID } from "node:crypto";
import { type JSONRPCMessage, ProtocolErrorCode } from "@modelcontextprotocol/client";
import type { InputRequest } from "@toolbus/protocol";
import { associateCall, type CallInFlight, unrelatedRequestMessage } from "../../core/call-association.js";
import { jsonRpcError } from "../../core/mcp-errors.js";
import { takeRelated } from "../../core/related-request.js";

/** What a server may send mid-call; each call has one, relaying to whoever made that call. */
export interface ServerRequestRelay {
  elicit(params: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** `sampling/createMessage`: resolves with the caller's `CreateMessageResult`, or throws the error the server gets. */
  sample(params: Record<string, unknown>): Promise<Record<string, unknown>>;
  /**
   * A 2026-07-28 server's round of questions (`inputRequests`, by its keys): resolves with the
   * caller's answers by the same keys, or throws the error the call fails with.
   */
  answerRound(requests: Record<string, InputRequest>): Promise<Record<string, unknown>>;
  log(params: Record<string, unknown>): void;
}

interface CallEntry extends CallInFlight {
  relay: ServerRequestRelay;
  onProgress?: (progress: Record<string, unknown>) => void;
}

type Params = Record<string, unknown>;

export class CallRouter {
  /** Tool calls in flight, by the progress token each was sent with. */
  private readonly calls = new Map<string, CallEntry>();
  private progressTokens = 0;
  /** Proves a related-request mark was put on by this connection's HTTP streams, not by the server. */
  readonly relatedNonce = randomUUID();

  /** `unrelated`: a server request that belonged to no call in flight was refused. */
  constructor(private readonly unrelated: (info: { method: string; why: string }) => void) {}

  /**
   * A call starts: its params get the progress token it is known by (sent with every call: it is
   * also how a stdio server can say which call a request is for). `end()` when it is over.
   */
  begin<P extends { _meta?: Params }>(
    params: P,
    relay: ServerRequestRelay,
    onProgress?: (progress: Params) => void,
  ): { params: P; end(): void } {
    const token = `toolbus-${++this.progressTokens}`;
    const callId = params._meta?.callId;
    this.calls.set(token, {
      progressToken: token,
      relay,
      ...(typeof callId === "string" ? { callId } : {}),
      ...(onProgress ? { onProgress } : {}),
    });
    return {
      params: { ...params, _meta: { ...params._meta, progressToken: token } },
      end: () => this.calls.delete(token),
    };
  }

  /** A message going out: a tools/call's JSON-RPC id is what related requests name. */
  sent(message: JSONRPCMessage): void {
    const { method, id, params } = message as {
      method?: unknown;
      id?: string | number;
      params?: { _meta?: { progressToken?: unknown } };
    };
    const token = params?._meta?.progressToken;
    if (method !== "tools/call" || id === undefined || typeof token !== "string") return;
    const call = this.calls.get(token);
    if (call) call.requestId = id;
  }

  /**
   * True when the message was a call's progress or a log message, now relayed (a log message
   * that belongs to no call in flight is dropped: servers log outside calls too).
   */
  relayNotification(message: JSONRPCMessage): boolean {
    const { method, id } = message as { method?: unknown; id?: unknown };
    if (typeof method !== "string" || id !== undefined) return false;
    const related = takeRelated(message, this.relatedNonce);
    const { params } = message as { params?: Params };
    if (method === "notifications/progress" && params) {
      const { progressToken, ...progress } = params;
      const call = typeof progressToken === "string" ? this.calls.get(progressToken) : undefined;
      call?.onProgress?.(progress);
      return call !== undefined;
    }
    if (method === "notifications/message" && params) {
      const association = this.associate(related, params);
      if (association.kind === "call") association.call.relay.log(params);
      return true;
    }
    return false;
  }

  /** The relay of the call a server request belongs to; none, and the server gets a JSON-RPC error saying why. */
  relayFor(method: string, request: { params?: Params }): ServerRequestRelay {
    const related = takeRelated(request, this.relatedNonce);
    const association = this.associate(related, request.params);
    if (association.kind === "call") return association.call.relay;
    this.unrelated({ method, why: association.why });
    throw jsonRpcError(ProtocolErrorCode.InvalidRequest, unrelatedRequestMessage(method, association.why));
  }

  private associate(related: string | number | undefined, params: Params | undefined) {
    const meta = params?._meta;
    return associateCall(this.calls.values(), {
      ...(related !== undefined ? { relatedRequestId: related } : {}),
      ...(typeof meta === "object" && meta !== null && !Array.isArray(meta) ? { meta: meta as Params } : {}),
    });
  }
}

/**
 * The gateway's span of a tool call, `toolbus.gateway.call`: the root of the call's trace, so
 * one trace per call id starts at the edge. A client that sends W3C trace context has the span
 * continue its trace instead, so an agent's own trace shows the call end to end: `traceparent`
 * (and `tracestate`) in the MCP request's `params._meta`, else in the HTTP headers. A malformed
 * value is ignored (a new trace). The call's bus requests run inside the span, so the
 * dispatcher's `toolbus.dispatch.call` continues the trace through the NATS headers.
 */
import {
  type Context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  type TextMapGetter,
} from "@opentelemetry/api";
import { withSpan } from "@toolbus/bus";
import type { EdgeApi } from "./metrics.js";

export const GATEWAY_CALL_SPAN = "toolbus.gateway.call";

/** HTTP headers (lower-case names) or an MCP request's `_meta`. */
type Carrier = Readonly<Record<string, unknown>>;

// Only strings count: `_meta` is the client's free-form JSON.
const getter: TextMapGetter<Carrier> = {
  get(carrier, key) {
    const value = carrier[key];
    if (typeof value === "string") return value;
    if (Array.isArray(value) && value.every((item) => typeof item === "string")) return value;
    return undefined;
  },
  keys: (carrier) => Object.keys(carrier),
};

/**
 * The trace context the client sent: from the MCP request's `_meta` when it carries one, else
 * from the HTTP headers, else none (`ROOT_CONTEXT`, so the call's span starts a trace).
 */
export function clientTraceContext(sources: {
  meta?: Carrier | undefined;
  headers?: Carrier | undefined;
}): Context {
  const fromHeaders = sources.headers
    ? propagation.extract(ROOT_CONTEXT, sources.headers, getter)
    : ROOT_CONTEXT;
  return sources.meta ? propagation.extract(fromHeaders, sources.meta, getter) : fromHeaders;
}

export interface CallSpanFacts {
  api: EdgeApi;
  /** The client's trace context (`clientTraceContext`). */
  parent: Context;
  callId: string;
  /** The server and raw tool name, when the edge resolved them (MCP); REST leaves that to the dispatcher. */
  server?: string;
  tool?: string;
  /** Who asked for the call (`ToolCallRequest.requestedBy`), as `enduser.id`; none with auth off. */
  principal?: string | undefined;
}

/** Runs `run` in the call's span; a throw marks the span failed. */
export function withCallSpan<T>(facts: CallSpanFacts, run: (span: Span) => Promise<T>): Promise<T> {
  return withSpan(
    GATEWAY_CALL_SPAN,
    {
      "mcp.call_id": facts.callId,
      "toolbus.gateway.api": facts.api,
      ...(facts.server === undefined ? {} : { "mcp.server": facts.server }),
      ...(facts.tool === undefined ? {} : { "mcp.tool": facts.tool }),
      ...(facts.principal === undefined ? {} : { "enduser.id": facts.principal }),
    },
    run,
    { kind: SpanKind.SERVER, parent: facts.parent },
  );
}

/**
 * OpenTelemetry trace context across the bus: W3C `traceparent`/`tracestate` in NATS headers
 * (docs/contract.md "Conventions"), and `withSpan` for spans with constant, dotted names.
 */
import { type MsgHdrs, headers as natsHeaders } from "@nats-io/transport-node";
import {
  type Attributes,
  type Context,
  context,
  propagation,
  type Span,
  type SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type TextMapSetter,
  trace,
} from "@opentelemetry/api";

export const TRACER_NAME = "@toolbus/bus";

/** The bus's tracer; a proxy, so it picks up a provider registered after this module loads. */
export const tracer = trace.getTracer(TRACER_NAME);

const setter: TextMapSetter<MsgHdrs> = { set: (h, key, value) => h.set(key, value) };

// MsgHdrs.get returns '' for an absent header, not undefined (nats.js's MsgHdrs): propagators need undefined.
const getter: TextMapGetter<MsgHdrs | undefined> = {
  get: (h, key) => h?.get(key) || undefined,
  keys: (h) => (h ? h.keys() : []),
};

/** Writes the active trace context into `headers` (created when absent) and returns them. */
export function injectTraceContext(
  headers: MsgHdrs = natsHeaders(),
  from: Context = context.active(),
): MsgHdrs {
  propagation.inject(from, headers, setter);
  return headers;
}

/** The context a message's headers carry, on top of the active one; the active one when they carry none. */
export function extractTraceContext(headers: MsgHdrs | undefined, base: Context = context.active()): Context {
  return propagation.extract(base, headers, getter);
}

export interface SpanOptions {
  kind?: SpanKind;
  /** The parent; default the active context. */
  parent?: Context;
}

/**
 * Runs `fn` inside an active span. A throw marks the span failed with the exception recorded,
 * then propagates; the span always ends.
 */
export async function withSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span) => Promise<T> | T,
  options: SpanOptions = {},
): Promise<T> {
  const parent = options.parent ?? context.active();
  return tracer.startActiveSpan(
    name,
    { attributes, ...(options.kind === undefined ? {} : { kind: options.kind }) },
    parent,
    async (span) => {
      try {
        return await fn(span);
      } catch (err) {
        markFailed(span, err);
        throw err;
      } finally {
        span.end();
      }
    },
  );
}

export function markFailed(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}

/**
 * Exporting what a test recorded so far (metrics read now, spans ended so far) without waiting
 * for the exporters' next interval; a no-op when nothing is exported. A service exports on its
 * own schedule and flushes when it stops (the function `startTelemetry` returns), so only tests
 * and benchmarks need this.
 */
import { metrics, trace } from "@opentelemetry/api";

export async function flushTelemetry(): Promise<void> {
  const providers = [metrics.getMeterProvider(), unwrapProxy(trace.getTracerProvider())];
  await Promise.all(
    providers.map((provider) => (provider as { forceFlush?: () => Promise<void> }).forceFlush?.()),
  );
}

/** The API hands out a proxy tracer provider; the SDK's is behind it. */
function unwrapProxy(provider: object): object {
  const delegate = (provider as { getDelegate?: () => object }).getDelegate?.();
  return delegate ?? provider;
}

/**
 * Starting OpenTelemetry for a service process. The W3C propagator and the async context
 * manager are always registered, so trace context flows through the service even when nothing
 * is exported. Spans and metrics are recorded and exported over OTLP/HTTP only when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` is set; the standard `OTEL_*` variables tune the exporters
 * (`OTEL_EXPORTER_OTLP_PROTOCOL`: `http/protobuf`, the default, or `http/json`).
 */

export interface TelemetryOptions {
  serviceName: string;
}

/** Returns the function that flushes and stops telemetry; call it last on shutdown. */
export async function startTelemetry(options: TelemetryOptions): Promise<() => Promise<void>> {
  // The exporters read the OTEL_* variables from process.env themselves, so this does too.
  const exporting = (process.env.OTEL_EXPORTER_OTLP_ENDPOINT ?? "").trim() !== "";
  // Imported here: the SDK and its exporters take a while to load and most tests never need them.
  const { NodeSDK } = await import("@opentelemetry/sdk-node");
  const sdk = new NodeSDK({
    serviceName: options.serviceName,
    instrumentations: [],
    // Logs go through pino, never the OTel log exporter.
    logRecordProcessors: [],
    // Without an endpoint: no span processors and no metric readers, so the SDK records nothing.
    ...(exporting ? {} : { spanProcessors: [], metricReaders: [] }),
  });
  sdk.start();
  return () => sdk.shutdown();
}

/**
 * Starting OpenTelemetry for a service process. The W3C propagator and the async context
 * manager are always registered, so trace context flows through the service even when nothing
 * is exported. Spans and metrics are recorded and exported over OTLP only when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` is set, and only then is the SDK loaded (with its exporters it
 * adds about 25 MB to a process that exports nothing). The standard `OTEL_*` variables tune the
 * exporters (`OTEL_EXPORTER_OTLP_PROTOCOL`: `http/protobuf`, the default, `http/json` or `grpc`;
 * `OTEL_METRIC_EXPORT_INTERVAL`: ms between metric exports, default 10 000;
 * `OTEL_METRICS_EXPORTER=none`: traces only).
 */
import { context, metrics, propagation } from "@opentelemetry/api";
import type { PushMetricExporter } from "@opentelemetry/sdk-metrics";
import { ConfigError } from "./config.js";
import {
  type MetricExportSettings,
  type TelemetrySettings,
  TelemetrySettingsError,
  telemetrySettings,
} from "./core/telemetry-settings.js";

export interface TelemetryOptions {
  serviceName: string;
}

/**
 * Returns the function that flushes and stops telemetry; call it last on shutdown. Throws
 * `ConfigError` naming the variable when an `OTEL_*` value cannot be used.
 */
export async function startTelemetry(options: TelemetryOptions): Promise<() => Promise<void>> {
  // The exporters read the OTEL_* variables from process.env themselves, so this does too.
  const settings = readSettings(process.env);
  if (!settings.exporting && settings.w3cPropagators) return propagateOnly();
  // Imported here: the SDK and its exporters take a while to load and most tests never need them.
  const { NodeSDK } = await import("@opentelemetry/sdk-node");
  const metricReaders = settings.metrics ? [await metricReader(settings.metrics)] : [];
  const sdk = new NodeSDK({
    serviceName: options.serviceName,
    instrumentations: [],
    // Logs go through pino, never the OTel log exporter.
    logRecordProcessors: [],
    // No readers, no meter provider: instruments stay OTel's no-ops and gauges are never read.
    metricReaders,
    // Without an endpoint: no span processors, so the SDK records no spans.
    ...(settings.exporting ? {} : { spanProcessors: [] }),
  });
  sdk.start();
  return async () => {
    await sdk.shutdown();
    // The next start in this process (tests) registers its own provider.
    metrics.disable();
  };
}

/**
 * What the SDK registers when it exports nothing (no tracer provider: spans are the API's
 * non-recording ones, carrying the caller's context on), without loading it.
 */
async function propagateOnly(): Promise<() => Promise<void>> {
  const [
    { AsyncLocalStorageContextManager },
    { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator },
  ] = await Promise.all([import("@opentelemetry/context-async-hooks"), import("@opentelemetry/core")]);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(
    new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
  );
  return async () => {
    // The next start in this process (tests) registers its own.
    context.disable();
    propagation.disable();
  };
}

function readSettings(env: NodeJS.ProcessEnv): TelemetrySettings {
  try {
    return telemetrySettings(env);
  } catch (error) {
    if (error instanceof TelemetrySettingsError) throw new ConfigError([error.message]);
    throw error;
  }
}

async function metricReader(settings: MetricExportSettings) {
  const { PeriodicExportingMetricReader } = await import("@opentelemetry/sdk-metrics");
  return new PeriodicExportingMetricReader({
    exporter: await metricExporter(settings.protocol),
    exportIntervalMillis: settings.intervalMs,
    exportTimeoutMillis: settings.timeoutMs,
  });
}

/** Each exporter reads its endpoint, headers and temporality from the OTEL_* variables. */
async function metricExporter(protocol: MetricExportSettings["protocol"]): Promise<PushMetricExporter> {
  switch (protocol) {
    case "http/json":
      return new (await import("@opentelemetry/exporter-metrics-otlp-http")).OTLPMetricExporter();
    case "grpc":
      return new (await import("@opentelemetry/exporter-metrics-otlp-grpc")).OTLPMetricExporter();
    case "http/protobuf":
      return new (await import("@opentelemetry/exporter-metrics-otlp-proto")).OTLPMetricExporter();
  }
}

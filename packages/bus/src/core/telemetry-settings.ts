/**
 * What telemetry a process exports, read from the standard `OTEL_*` variables: nothing unless
 * `OTEL_EXPORTER_OTLP_ENDPOINT` is set (docs/contract.md "Running"); then traces, and metrics read
 * and pushed every `OTEL_METRIC_EXPORT_INTERVAL` ms over the OTLP protocol asked for.
 */

export type OtlpProtocol = "http/protobuf" | "http/json" | "grpc";

export interface MetricExportSettings {
  protocol: OtlpProtocol;
  intervalMs: number;
  /** Never longer than the interval: one slow export must not overlap the next. */
  timeoutMs: number;
}

export interface TelemetrySettings {
  exporting: boolean;
  /**
   * Whether `OTEL_PROPAGATORS` asks for no more than W3C trace context and baggage (unset: the
   * SDK's default), which the process can register without loading the SDK.
   */
  w3cPropagators: boolean;
  /** Undefined when nothing is exported or `OTEL_METRICS_EXPORTER=none`. */
  metrics: MetricExportSettings | undefined;
}

/** Short, so dashboards move while someone watches; the SDK's own default is 60 s. */
export const DEFAULT_METRIC_EXPORT_INTERVAL_MS = 10_000;
export const DEFAULT_METRIC_EXPORT_TIMEOUT_MS = 5_000;

const PROTOCOLS: readonly OtlpProtocol[] = ["http/protobuf", "http/json", "grpc"];
/** The SDK's default `OTEL_PROPAGATORS`. */
const W3C_PROPAGATORS: readonly string[] = ["tracecontext", "baggage"];

/** A comma-separated variable's names, blanks left out. */
function listOf(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
}

/** Thrown for a variable that cannot be used; the message names it and what it accepts. */
export class TelemetrySettingsError extends Error {
  override readonly name = "TelemetrySettingsError";
}

export function telemetrySettings(env: Readonly<Record<string, string | undefined>>): TelemetrySettings {
  const exporting = (env.OTEL_EXPORTER_OTLP_ENDPOINT ?? "").trim() !== "";
  const w3cPropagators = listOf(env.OTEL_PROPAGATORS).every((name) => W3C_PROPAGATORS.includes(name));
  if (!exporting) return { exporting, w3cPropagators, metrics: undefined };
  const exporters = listOf(env.OTEL_METRICS_EXPORTER);
  if (exporters.includes("none")) return { exporting, w3cPropagators, metrics: undefined };
  const unsupported = exporters.filter((name) => name !== "otlp");
  if (unsupported.length > 0) {
    throw new TelemetrySettingsError(
      `OTEL_METRICS_EXPORTER=${env.OTEL_METRICS_EXPORTER}: toolbus exports metrics over OTLP only; set it to "otlp" or "none", or unset it`,
    );
  }
  const intervalMs = milliseconds(env, "OTEL_METRIC_EXPORT_INTERVAL", DEFAULT_METRIC_EXPORT_INTERVAL_MS);
  const timeoutMs = milliseconds(env, "OTEL_METRIC_EXPORT_TIMEOUT", DEFAULT_METRIC_EXPORT_TIMEOUT_MS);
  return {
    exporting,
    w3cPropagators,
    metrics: { protocol: protocol(env), intervalMs, timeoutMs: Math.min(timeoutMs, intervalMs) },
  };
}

/** The metrics protocol: the metrics-only variable first, then the shared one, as the SDK reads them. */
function protocol(env: Readonly<Record<string, string | undefined>>): OtlpProtocol {
  for (const name of ["OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"]) {
    const value = env[name]?.trim();
    if (value === undefined || value === "") continue;
    if ((PROTOCOLS as readonly string[]).includes(value)) return value as OtlpProtocol;
    throw new TelemetrySettingsError(
      `${name}=${value} is not an OTLP protocol; use one of ${PROTOCOLS.join(", ")}`,
    );
  }
  return "http/protobuf";
}

function milliseconds(
  env: Readonly<Record<string, string | undefined>>,
  name: string,
  fallback: number,
): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) {
    throw new TelemetrySettingsError(
      `${name}=${raw} is not a whole number of milliseconds above 0; set e.g. ${name}=${fallback}, or unset it for ${fallback}`,
    );
  }
  return value;
}

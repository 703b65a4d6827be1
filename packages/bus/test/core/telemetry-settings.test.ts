import { describe, expect, it } from "vitest";
import { TelemetrySettingsError, telemetrySettings } from "../../src/core/telemetry-settings.js";

const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" };

describe("telemetrySettings", () => {
  it.each([{}, { OTEL_EXPORTER_OTLP_ENDPOINT: "" }, { OTEL_EXPORTER_OTLP_ENDPOINT: "  " }])(
    "exports nothing without an endpoint (%j), whatever else is set",
    (env) => {
      expect(
        telemetrySettings({ ...env, OTEL_METRIC_EXPORT_INTERVAL: "oops", OTEL_EXPORTER_OTLP_PROTOCOL: "x" }),
      ).toEqual({ exporting: false, w3cPropagators: true, metrics: undefined });
    },
  );

  it("exports metrics over http/protobuf every 10 s by default once an endpoint is set", () => {
    expect(telemetrySettings(endpoint)).toEqual({
      exporting: true,
      w3cPropagators: true,
      metrics: { protocol: "http/protobuf", intervalMs: 10_000, timeoutMs: 5_000 },
    });
  });

  it("takes the interval, the timeout (never above the interval) and the protocol from the OTEL_* variables", () => {
    expect(
      telemetrySettings({
        ...endpoint,
        OTEL_METRIC_EXPORT_INTERVAL: "2000",
        OTEL_METRIC_EXPORT_TIMEOUT: "9000",
        OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
        OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: "http/json",
      }),
    ).toEqual({
      exporting: true,
      w3cPropagators: true,
      metrics: { protocol: "http/json", intervalMs: 2_000, timeoutMs: 2_000 },
    });
  });

  it.each([[{ OTEL_METRICS_EXPORTER: "none" }], [{ OTEL_METRICS_EXPORTER: "otlp, none" }]])(
    "exports traces only when %j",
    (env) => {
      expect(telemetrySettings({ ...endpoint, ...env })).toEqual({
        exporting: true,
        w3cPropagators: true,
        metrics: undefined,
      });
    },
  );

  it.each([
    [undefined, true],
    ["tracecontext,baggage", true],
    [" baggage , tracecontext ", true],
    ["tracecontext", true],
    ["tracecontext,b3", false],
    ["jaeger", false],
  ])(
    "OTEL_PROPAGATORS=%j asks for W3C propagation only: %j (else the SDK is loaded for it)",
    (value, w3c) => {
      expect(telemetrySettings({ OTEL_PROPAGATORS: value }).w3cPropagators).toBe(w3c);
    },
  );

  it.each([
    [
      { OTEL_METRIC_EXPORT_INTERVAL: "10s" },
      "OTEL_METRIC_EXPORT_INTERVAL=10s is not a whole number of milliseconds above 0; set e.g. OTEL_METRIC_EXPORT_INTERVAL=10000, or unset it for 10000",
    ],
    [
      { OTEL_METRIC_EXPORT_TIMEOUT: "0" },
      "OTEL_METRIC_EXPORT_TIMEOUT=0 is not a whole number of milliseconds above 0; set e.g. OTEL_METRIC_EXPORT_TIMEOUT=5000, or unset it for 5000",
    ],
    [
      { OTEL_EXPORTER_OTLP_PROTOCOL: "http" },
      "OTEL_EXPORTER_OTLP_PROTOCOL=http is not an OTLP protocol; use one of http/protobuf, http/json, grpc",
    ],
    [
      { OTEL_METRICS_EXPORTER: "prometheus" },
      'OTEL_METRICS_EXPORTER=prometheus: toolbus exports metrics over OTLP only; set it to "otlp" or "none", or unset it',
    ],
  ])("refuses %j, naming the variable and what it takes", (env, message) => {
    const read = () => telemetrySettings({ ...endpoint, ...env });
    expect(read).toThrow(TelemetrySettingsError);
    expect(read).toThrow(message);
  });
});

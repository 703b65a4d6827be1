/**
 * A stand-in OTLP/HTTP collector for tests, on 127.0.0.1: it accepts `POST /v1/metrics` and
 * `POST /v1/traces`, records every request's path and content type, and decodes JSON exports
 * (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) into metric data points and spans a test can look up.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedRequest {
  path: string;
  contentType: string;
  bytes: number;
}

/** One data point as exported: the series (service, metric, attributes) and its values. */
export interface MetricPoint {
  service: string;
  metric: string;
  unit: string;
  kind: "sum" | "gauge" | "histogram";
  attributes: Record<string, string | number | boolean>;
  /** Sum or gauge value; undefined for a histogram. */
  value: number | undefined;
  /** Histogram sample count and sum; undefined otherwise. */
  count: number | undefined;
  sum: number | undefined;
  /** Export time, ns since the epoch, for ordering. */
  timeUnixNano: bigint;
}

/** One span as exported. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  /** Undefined for a span without a parent (the root of its trace). */
  parentSpanId: string | undefined;
  name: string;
  attributes: Record<string, string | number | boolean>;
}

type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
};
type KeyValue = { key: string; value?: AnyValue };
type NumberPoint = {
  attributes?: KeyValue[];
  asDouble?: number;
  asInt?: string | number;
  timeUnixNano?: string | number;
};
type HistogramPoint = {
  attributes?: KeyValue[];
  count?: string | number;
  sum?: number;
  timeUnixNano?: string | number;
};
type OtlpMetric = {
  name: string;
  unit?: string;
  sum?: { dataPoints?: NumberPoint[] };
  gauge?: { dataPoints?: NumberPoint[] };
  histogram?: { dataPoints?: HistogramPoint[] };
};
export type OtlpMetricsRequest = {
  resourceMetrics?: Array<{
    resource?: { attributes?: KeyValue[] };
    scopeMetrics?: Array<{ metrics?: OtlpMetric[] }>;
  }>;
};

export type OtlpTracesRequest = {
  resourceSpans?: Array<{
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: Array<{
      spans?: Array<{
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        attributes?: KeyValue[];
      }>;
    }>;
  }>;
};

/** Every span of one OTLP JSON traces export (ExportTraceServiceRequest). */
export function spansFromOtlpJson(body: OtlpTracesRequest): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resource of body.resourceSpans ?? []) {
    const service = String(attributesOf(resource.resource?.attributes)["service.name"] ?? "");
    for (const scope of resource.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        spans.push({
          service,
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId || undefined,
          name: span.name,
          attributes: attributesOf(span.attributes),
        });
      }
    }
  }
  return spans;
}

/** Every data point of one OTLP JSON metrics export (ExportMetricsServiceRequest). */
export function metricPointsFromOtlpJson(body: OtlpMetricsRequest): MetricPoint[] {
  const points: MetricPoint[] = [];
  for (const resource of body.resourceMetrics ?? []) {
    const service = String(attributesOf(resource.resource?.attributes)["service.name"] ?? "");
    for (const scope of resource.scopeMetrics ?? []) {
      for (const metric of scope.metrics ?? []) {
        const base = { service, metric: metric.name, unit: metric.unit ?? "" };
        for (const [kind, data] of [
          ["sum", metric.sum],
          ["gauge", metric.gauge],
        ] as const) {
          for (const point of data?.dataPoints ?? []) {
            points.push({
              ...base,
              kind,
              attributes: attributesOf(point.attributes),
              value: point.asDouble ?? (point.asInt === undefined ? undefined : Number(point.asInt)),
              count: undefined,
              sum: undefined,
              timeUnixNano: BigInt(point.timeUnixNano ?? 0),
            });
          }
        }
        for (const point of metric.histogram?.dataPoints ?? []) {
          points.push({
            ...base,
            kind: "histogram",
            attributes: attributesOf(point.attributes),
            value: undefined,
            count: Number(point.count ?? 0),
            sum: point.sum,
            timeUnixNano: BigInt(point.timeUnixNano ?? 0),
          });
        }
      }
    }
  }
  return points;
}

function attributesOf(list: KeyValue[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) {
    const v = value?.stringValue ?? value?.boolValue ?? value?.doubleValue ?? value?.intValue;
    if (v !== undefined) out[key] = typeof v === "string" && value?.intValue !== undefined ? Number(v) : v;
  }
  return out;
}

export interface OtlpReceiver {
  /** The value for `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  endpoint: string;
  /** The environment a service process needs to export its spans here as JSON within moments (no metrics). */
  traceEnv: Record<string, string>;
  /** Every request received, oldest first. */
  readonly requests: ReceivedRequest[];
  /** Every metric data point received (JSON exports only), oldest first. */
  readonly points: MetricPoint[];
  /** Every span received (JSON exports only), oldest first. */
  readonly spans: ReceivedSpan[];
  /**
   * The newest point of each series of `metric` whose attributes include `attributes`
   * (exports are cumulative, so the newest point holds the totals).
   */
  latest(metric: string, attributes?: Record<string, string | number | boolean>): MetricPoint[];
  /** The one newest point of that series; throws saying what was received when there is none or several. */
  only(metric: string, attributes?: Record<string, string | number | boolean>): MetricPoint;
  close(): Promise<void>;
}

/** Body limit: a test export is a few KiB; anything past this is refused with 413. */
const MAX_BODY_BYTES = 8 * 1024 * 1024;

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const requests: ReceivedRequest[] = [];
  const points: MetricPoint[] = [];
  const spans: ReceivedSpan[] = [];
  const server: Server = createServer((request, response) => {
    void readBody(request).then(
      (body) => {
        const path = request.url ?? "";
        const contentType = request.headers["content-type"] ?? "";
        requests.push({ path, contentType, bytes: body.length });
        const json = contentType.startsWith("application/json");
        if (path === "/v1/metrics" && json) {
          points.push(...metricPointsFromOtlpJson(JSON.parse(body.toString("utf8")) as OtlpMetricsRequest));
        }
        if (path === "/v1/traces" && json) {
          spans.push(...spansFromOtlpJson(JSON.parse(body.toString("utf8")) as OtlpTracesRequest));
        }
        response.writeHead(200, { "content-type": "application/json" }).end("{}");
      },
      (error: Error) => response.writeHead(413, { "content-type": "text/plain" }).end(error.message),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  const latest = (metric: string, attributes: Record<string, string | number | boolean> = {}) => {
    const series = new Map<string, MetricPoint>();
    for (const point of points) {
      if (point.metric !== metric) continue;
      if (!Object.entries(attributes).every(([key, value]) => point.attributes[key] === value)) continue;
      const key = JSON.stringify([point.service, Object.entries(point.attributes).sort()]);
      const known = series.get(key);
      if (known === undefined || point.timeUnixNano >= known.timeUnixNano) series.set(key, point);
    }
    return [...series.values()];
  };
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    traceEnv: {
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      // The batch span processor waits 5 s by default.
      OTEL_BSP_SCHEDULE_DELAY: "50",
      OTEL_METRICS_EXPORTER: "none",
      OTEL_LOGS_EXPORTER: "none",
    },
    requests,
    points,
    spans,
    latest,
    only(metric, attributes = {}) {
      const found = latest(metric, attributes);
      if (found.length !== 1) {
        const seen = latest(metric).map((point) => point.attributes);
        throw new Error(
          `expected one series of ${metric} with ${JSON.stringify(attributes)}, found ${found.length}; series received: ${JSON.stringify(seen)}`,
        );
      }
      return found[0]!;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        request.destroy();
        reject(new Error(`body over ${MAX_BODY_BYTES} bytes`));
      } else chunks.push(chunk);
    });
    request.on("end", () => resolve(Buffer.concat(chunks)));
    request.on("error", reject);
  });
}

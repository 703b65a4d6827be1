/**
 * What metrics cost on the request path. Two phases in one process: telemetry off (the no-op
 * meter, as without `OTEL_EXPORTER_OTLP_ENDPOINT`), then on (an SDK meter provider exporting to
 * a receiver on 127.0.0.1, interval long enough that export never runs during measurement).
 * Each phase measures a served endpoint's round trip over NATS (which records
 * `toolbus.bus.requests` and `toolbus.bus.request.duration`) and, in a tight loop, one recorded
 * call (a counter add and a histogram record on cached attributes, as the dispatcher does).
 */
import { performance } from "node:perf_hooks";
import { AttributeCache, connectBus, createLogger, defineMetrics, startTelemetry } from "@toolbus/bus";
import { flushTelemetry, isolation, startOtlpReceiver } from "@toolbus/testkit";
import { z } from "zod";
import { type BenchRow, formatTable, isEntryModule, ms, timings } from "./bench-table.js";

const ROUND_TRIP_WARMUP = 300;
const ROUND_TRIPS = 3_000;
const RECORD_WARMUP = 50_000;
const RECORDS = 1_000_000;

const SET = defineMetrics("@toolbus/bench", {
  calls: {
    kind: "counter",
    name: "toolbus.bench.calls",
    unit: "{call}",
    description: "Bench calls.",
    attributes: ["mcp.server", "toolbus.call.status"],
  },
  duration: {
    kind: "histogram",
    name: "toolbus.bench.call.duration",
    unit: "s",
    description: "Bench call durations.",
    attributes: ["mcp.server", "toolbus.call.status"],
  },
});

export async function runMetricsBench(): Promise<BenchRow[]> {
  const natsUrl = process.env.NATS_URL || "nats://127.0.0.1:4222";
  const receiver = await startOtlpReceiver();
  const saved = { ...process.env };
  const rows: BenchRow[] = [];
  try {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    let stop = await startTelemetry({ serviceName: "toolbus-bench" });
    rows.push(...(await phase("off", natsUrl)));
    await stop();
    Object.assign(process.env, {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_METRIC_EXPORT_INTERVAL: "3600000",
      OTEL_TRACES_EXPORTER: "none",
    });
    stop = await startTelemetry({ serviceName: "toolbus-bench" });
    rows.push(...(await phase("on", natsUrl)));
    await flushTelemetry();
    await stop();
  } finally {
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
    await receiver.close();
  }
  return rows;
}

async function phase(label: "off" | "on", natsUrl: string): Promise<BenchRow[]> {
  const logger = createLogger({ service: "bench", version: "0.0.0", level: "silent" });
  const server = await connectBus({ natsUrl, service: { name: "bench-metrics", version: "0.0.0" }, logger });
  const client = await connectBus({ natsUrl, service: { name: "bench-client", version: "0.0.0" }, logger });
  try {
    const subject = `${isolation("metrics").prefix}.echo`;
    await server.serve({ subject, name: "echo", request: z.object({ n: z.number() }) }, async ({ n }) => ({
      n,
    }));
    const samples: number[] = [];
    for (let i = 0; i < ROUND_TRIP_WARMUP + ROUND_TRIPS; i++) {
      const started = performance.now();
      await client.request(subject, { n: i }, z.object({ n: z.number() }));
      if (i >= ROUND_TRIP_WARMUP) samples.push(performance.now() - started);
    }

    const instruments = SET.create();
    const attributes = new AttributeCache((server: string, status: string) => ({
      "mcp.server": server,
      "toolbus.call.status": status,
    }));
    const record = (i: number) => {
      const point = attributes.get(i % 2 === 0 ? "a" : "b", "completed");
      instruments.calls.add(1, point);
      instruments.duration.record(0.001 * (i % 100), point);
    };
    for (let i = 0; i < RECORD_WARMUP; i++) record(i);
    const started = performance.now();
    for (let i = 0; i < RECORDS; i++) record(i);
    const nsPerRecord = ((performance.now() - started) * 1e6) / RECORDS;
    return [
      { name: `served round trip, metrics ${label}`, ...timings(samples) },
      { name: `record one call, metrics ${label}`, runs: RECORDS, "ns/op": ms(nsPerRecord) },
    ];
  } finally {
    await client.close();
    await server.close();
  }
}

if (isEntryModule(import.meta.url)) {
  console.log(formatTable(await runMetricsBench()));
  process.exit(0);
}

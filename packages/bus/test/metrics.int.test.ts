// Metrics through the whole pipeline: served endpoints and a declared gauge, read by the
// SDK, exported as OTLP/HTTP JSON to a receiver on 127.0.0.1. This file runs in its own
// worker, so the env vars and the global meter provider stay here.
import { WireError } from "@toolbus/protocol";
import { flushTelemetry, type OtlpReceiver, startOtlpReceiver } from "@toolbus/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigError } from "../src/config.js";
import { defineMetrics, observeGauge } from "../src/metrics.js";
import { startTelemetry } from "../src/telemetry.js";
import { startBus, uniqueName } from "./support.js";

let receiver: OtlpReceiver;
let stopTelemetry: () => Promise<void>;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.endpoint;
  process.env.OTEL_EXPORTER_OTLP_PROTOCOL = "http/json";
  // Long: the tests export when they flush, not on a timer.
  process.env.OTEL_METRIC_EXPORT_INTERVAL = "600000";
  stopTelemetry = await startTelemetry({ serviceName: "bus-metrics-test" });
});
afterAll(async () => {
  await stopTelemetry();
  for (const name of [
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_METRIC_EXPORT_INTERVAL",
  ]) {
    delete process.env[name];
  }
  await receiver.close();
});

describe("bus metrics", () => {
  it("counts each answered request by subject and outcome, with its duration", async () => {
    const { bus } = await startBus();
    const subject = `${uniqueName()}.echo`;
    await bus.serve({ subject, name: "echo", request: z.object({ word: z.string() }) }, async ({ word }) => {
      if (word === "missing") throw new WireError("unknown_tool", "no such word; ask for another");
      return { word };
    });
    for (const word of ["a", "b", "c", "missing"]) {
      await bus.request(subject, { word }, z.unknown()).catch(() => undefined);
    }
    await bus.request(subject, { word: 42 }, z.unknown()).catch(() => undefined);
    await flushTelemetry();

    const series = (metric: string) =>
      receiver
        .latest(metric, { "messaging.destination.name": subject })
        .map((point) => ({
          service: point.service,
          unit: point.unit,
          outcome: point.attributes["toolbus.outcome"],
          value: point.value ?? point.count,
        }))
        .sort((a, b) => String(a.outcome).localeCompare(String(b.outcome)));
    const expected = (unit: string) => [
      { service: "bus-metrics-test", unit, outcome: "bad_request", value: 1 },
      { service: "bus-metrics-test", unit, outcome: "ok", value: 3 },
      { service: "bus-metrics-test", unit, outcome: "unknown_tool", value: 1 },
    ];
    expect(series("toolbus.bus.requests")).toEqual(expected("{request}"));
    expect(series("toolbus.bus.request.duration")).toEqual(expected("s"));
    const ok = receiver.only("toolbus.bus.request.duration", {
      "messaging.destination.name": subject,
      "toolbus.outcome": "ok",
    });
    expect(ok.sum).toBeGreaterThan(0);
  });

  it("reads a declared gauge on every export, and no more once its callback is removed", async () => {
    const set = defineMetrics("@toolbus/bus-test", {
      depth: {
        kind: "gauge",
        name: "toolbus.test.queue.depth",
        unit: "{item}",
        description: "Items waiting.",
        attributes: ["toolbus.queue"],
      },
    });
    const { depth } = set.create();
    let waiting = 2;
    const stop = observeGauge(depth, (result) => result.observe(waiting, { "toolbus.queue": "q" }));
    await flushTelemetry();
    expect(receiver.only("toolbus.test.queue.depth").value).toBe(2);
    waiting = 5;
    await flushTelemetry();
    expect(receiver.only("toolbus.test.queue.depth").value).toBe(5);
    stop();
    waiting = 9;
    await flushTelemetry();
    // No longer read: the series keeps the last value it had.
    expect(receiver.only("toolbus.test.queue.depth").value).toBe(5);
  });

  it("refuses to start with an OTEL_* value it cannot use, naming the variable, before registering anything", async () => {
    process.env.OTEL_METRIC_EXPORT_INTERVAL = "soon";
    try {
      const starting = startTelemetry({ serviceName: "bus-metrics-test-bad" });
      await expect(starting).rejects.toBeInstanceOf(ConfigError);
      await expect(starting).rejects.toThrow(
        "invalid configuration (1 problem); fix each and start again:\n  - OTEL_METRIC_EXPORT_INTERVAL=soon is not a whole number of milliseconds above 0",
      );
    } finally {
      process.env.OTEL_METRIC_EXPORT_INTERVAL = "600000";
    }
  });

  it("refuses a declaration that breaks the naming rules, saying which and why", () => {
    expect(() =>
      defineMetrics("@toolbus/bus-test", {
        calls: {
          kind: "counter",
          name: "calls",
          unit: "{call}",
          description: "x",
          attributes: ["mcp.call_id"],
        },
      }),
    ).toThrow(
      'metrics of @toolbus/bus-test:\n  - metric calls (calls): the name must be dotted lower-case words under "toolbus.", e.g. toolbus.catalog.revision\n  - metric calls (calls): attribute "mcp.call_id" has a value per call or session; keep it on spans, not metrics',
    );
  });
});

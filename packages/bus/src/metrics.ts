/**
 * OpenTelemetry metrics for services: each declares its instruments once with `defineMetrics`
 * (names, units, attributes, typed), and creates them when it starts, after `startTelemetry`.
 * Without an exporter the global meter is OTel's no-op one: recording costs a call that does
 * nothing, and gauge callbacks never run.
 */
import {
  type Counter,
  type Histogram,
  type Meter,
  metrics,
  type ObservableGauge,
  type ObservableResult,
  type UpDownCounter,
} from "@opentelemetry/api";
import { DURATION_BUCKETS_S, type MetricSpec, metricSpecProblems } from "./core/metric-specs.js";

/** The attributes a spec lists, each with a value. */
export type AttributesOf<S extends MetricSpec> = {
  [K in S["attributes"][number]]: string | number | boolean;
};

export type InstrumentOf<S extends MetricSpec> = S["kind"] extends "counter"
  ? Counter<AttributesOf<S>>
  : S["kind"] extends "up-down-counter"
    ? UpDownCounter<AttributesOf<S>>
    : S["kind"] extends "histogram"
      ? Histogram<AttributesOf<S>>
      : ObservableGauge<AttributesOf<S>>;

export type Instruments<T extends Record<string, MetricSpec>> = {
  readonly [K in keyof T]: InstrumentOf<T[K]>;
};

export interface MetricSet<T extends Record<string, MetricSpec>> {
  /** The instrumentation scope (meter name), e.g. `@toolbus/dispatcher`. */
  readonly scope: string;
  readonly specs: Readonly<T>;
  /**
   * Every instrument, on `meter` (default: the global provider's meter for `scope` as it is
   * now, so call this after `startTelemetry`).
   */
  create(meter?: Meter): Instruments<T>;
  /** One instrument, for a process that records a metric another service declares. */
  instrument<K extends keyof T & string>(key: K, meter?: Meter): InstrumentOf<T[K]>;
}

/** Declares a service's instruments; throws at once, naming each problem, when one breaks the rules. */
export function defineMetrics<const T extends Record<string, MetricSpec>>(
  scope: string,
  specs: T,
): MetricSet<T> {
  const problems = metricSpecProblems(specs);
  if (problems.length > 0) throw new Error(`metrics of ${scope}:\n  - ${problems.join("\n  - ")}`);
  const meterOf = (meter: Meter | undefined) => meter ?? metrics.getMeter(scope);
  const instrument = <K extends keyof T & string>(key: K, meter?: Meter) =>
    createInstrument(meterOf(meter), specs[key]!) as InstrumentOf<T[K]>;
  return {
    scope,
    specs,
    create(meter) {
      const chosen = meterOf(meter);
      return Object.fromEntries(
        Object.entries(specs).map(([key, spec]) => [key, createInstrument(chosen, spec)]),
      ) as Instruments<T>;
    },
    instrument,
  };
}

function createInstrument(meter: Meter, spec: MetricSpec) {
  const options = { description: spec.description, unit: spec.unit };
  switch (spec.kind) {
    case "counter":
      return meter.createCounter(spec.name, options);
    case "up-down-counter":
      return meter.createUpDownCounter(spec.name, options);
    case "histogram":
      return meter.createHistogram(spec.name, {
        ...options,
        advice: { explicitBucketBoundaries: [...(spec.boundaries ?? DURATION_BUCKETS_S)] },
      });
    case "gauge":
      return meter.createObservableGauge(spec.name, options);
  }
}

/**
 * Reports `read`'s values on every collection. A read that throws or rejects reports nothing
 * this time (a database briefly down must not fail the export). Returns the function that stops it.
 */
export function observeGauge<A extends Record<string, string | number | boolean>>(
  gauge: ObservableGauge<A>,
  read: (result: ObservableResult<A>) => void | Promise<void>,
): () => void {
  const callback = async (result: ObservableResult<A>) => {
    try {
      await read(result);
    } catch {
      // Nothing observed: the series has no point for this collection.
    }
  };
  gauge.addCallback(callback);
  return () => gauge.removeCallback(callback);
}

/** Seconds since `startedMs` (a `performance.now()` reading), as duration histograms record. */
export function secondsSince(startedMs: number): number {
  return (performance.now() - startedMs) / 1000;
}

/** What every served endpoint records (packages/bus `serve`), and the JetStream event publisher. */
export const BUS_METRICS = defineMetrics("@toolbus/bus", {
  requests: {
    kind: "counter",
    name: "toolbus.bus.requests",
    unit: "{request}",
    description:
      "Requests a served endpoint answered, by subject and outcome (`ok` or the error code answered).",
    attributes: ["messaging.destination.name", "toolbus.outcome"],
  },
  requestDuration: {
    kind: "histogram",
    name: "toolbus.bus.request.duration",
    unit: "s",
    description: "Seconds from receiving a request to sending its reply, by subject and outcome.",
    attributes: ["messaging.destination.name", "toolbus.outcome"],
  },
  lateReplies: {
    kind: "counter",
    name: "toolbus.bus.replies.late",
    unit: "{reply}",
    description:
      "Replies that arrived after their request had timed out and were dropped (the caller had already answered `timeout`); a stored large reply among them is deleted.",
    attributes: [],
  },
  eventsUnacked: {
    kind: "gauge",
    name: "toolbus.bus.events.unacked",
    unit: "{event}",
    description:
      "JetStream events this process published that are not acknowledged yet: in flight, or waiting to be retried while JetStream does not answer.",
    attributes: [],
  },
  eventsLost: {
    kind: "counter",
    name: "toolbus.bus.events.lost",
    unit: "{event}",
    description:
      "JetStream events given up on, by reason: `retry_budget` (not acknowledged within the retry budget), `overflow` (published while the most events this process holds were waiting), `closed` (the NATS connection was closed).",
    attributes: ["toolbus.reason"],
  },
});

export type BusInstruments = Instruments<(typeof BUS_METRICS)["specs"]>;

import { describe, expect, it } from "vitest";
import { metricPointsFromOtlpJson, spansFromOtlpJson } from "../src/otlp-receiver.js";

describe("metricPointsFromOtlpJson", () => {
  it("reads sums, gauges and histograms with their service, attributes and values", () => {
    const service = { attributes: [{ key: "service.name", value: { stringValue: "toolbus-dispatcher" } }] };
    const attributes = [
      { key: "mcp.server", value: { stringValue: "s" } },
      { key: "http.response.status_code", value: { intValue: "200" } },
      { key: "ok", value: { boolValue: true } },
    ];
    expect(
      metricPointsFromOtlpJson({
        resourceMetrics: [
          {
            resource: service,
            scopeMetrics: [
              {
                metrics: [
                  {
                    name: "a.sum",
                    unit: "{call}",
                    sum: { dataPoints: [{ attributes, asDouble: 3, timeUnixNano: "5" }] },
                  },
                  { name: "a.gauge", gauge: { dataPoints: [{ asInt: "7", timeUnixNano: 6 }] } },
                  {
                    name: "a.histogram",
                    unit: "s",
                    histogram: { dataPoints: [{ count: "2", sum: 0.5, timeUnixNano: "7" }] },
                  },
                ],
              },
            ],
          },
        ],
      }),
    ).toEqual([
      {
        service: "toolbus-dispatcher",
        metric: "a.sum",
        unit: "{call}",
        kind: "sum",
        attributes: { "mcp.server": "s", "http.response.status_code": 200, ok: true },
        value: 3,
        count: undefined,
        sum: undefined,
        timeUnixNano: 5n,
      },
      {
        service: "toolbus-dispatcher",
        metric: "a.gauge",
        unit: "",
        kind: "gauge",
        attributes: {},
        value: 7,
        count: undefined,
        sum: undefined,
        timeUnixNano: 6n,
      },
      {
        service: "toolbus-dispatcher",
        metric: "a.histogram",
        unit: "s",
        kind: "histogram",
        attributes: {},
        value: undefined,
        count: 2,
        sum: 0.5,
        timeUnixNano: 7n,
      },
    ]);
  });

  it("reads an empty export as no points", () => {
    expect(metricPointsFromOtlpJson({})).toEqual([]);
    expect(metricPointsFromOtlpJson({ resourceMetrics: [{ scopeMetrics: [{ metrics: [] }] }] })).toEqual([]);
  });
});

describe("spansFromOtlpJson", () => {
  it("reads each span with its service, ids, parent (none for a root) and attributes", () => {
    expect(
      spansFromOtlpJson({
        resourceSpans: [
          {
            resource: { attributes: [{ key: "service.name", value: { stringValue: "toolbus-catalog" } }] },
            scopeSpans: [
              {
                spans: [
                  {
                    traceId: "t1",
                    spanId: "s1",
                    parentSpanId: "",
                    name: "root",
                    attributes: [{ key: "mcp.call_id", value: { stringValue: "c1" } }],
                  },
                  { traceId: "t1", spanId: "s2", parentSpanId: "s1", name: "child" },
                ],
              },
            ],
          },
        ],
      }),
    ).toEqual([
      {
        service: "toolbus-catalog",
        traceId: "t1",
        spanId: "s1",
        parentSpanId: undefined,
        name: "root",
        attributes: { "mcp.call_id": "c1" },
      },
      {
        service: "toolbus-catalog",
        traceId: "t1",
        spanId: "s2",
        parentSpanId: "s1",
        name: "child",
        attributes: {},
      },
    ]);
  });
});

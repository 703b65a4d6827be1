import { describe, expect, it } from "vitest";
import { type MetricSpec, metricSpecProblems } from "../../src/core/metric-specs.js";

const calls: MetricSpec = {
  kind: "counter",
  name: "toolbus.dispatcher.calls",
  unit: "{call}",
  description: "Calls answered.",
  attributes: ["mcp.server", "toolbus.call.status"],
};
const duration: MetricSpec = {
  kind: "histogram",
  name: "toolbus.dispatcher.call.duration",
  unit: "s",
  description: "Time per call.",
  attributes: [],
  boundaries: [0.1, 1, 10],
};

describe("metricSpecProblems", () => {
  it("accepts names under toolbus., OTel units and bounded attributes", () => {
    expect(metricSpecProblems({ calls, duration })).toEqual([]);
  });

  it("names each broken rule with the instrument it is in", () => {
    expect(
      metricSpecProblems({
        outside: { ...calls, name: "dispatcher.calls" },
        calls,
        twice: { ...calls },
        unit: { ...calls, name: "toolbus.a.b", unit: "calls" },
        milliseconds: { ...duration, name: "toolbus.x.duration", unit: "ms" },
        silent: { ...calls, name: "toolbus.a.c", description: " " },
        perCall: { ...calls, name: "toolbus.a.d", attributes: ["mcp.call_id", "Bad-Name", "x", "x"] },
        buckets: { ...calls, name: "toolbus.a.e", boundaries: [2, 1] },
      }),
    ).toEqual([
      'metric outside (dispatcher.calls): the name must be dotted lower-case words under "toolbus.", e.g. toolbus.catalog.revision',
      "metric twice (toolbus.dispatcher.calls): the name is declared twice",
      'metric unit (toolbus.a.b): unit "calls" is not one of s, By, 1 or a {count} annotation such as {call}',
      'metric milliseconds (toolbus.x.duration): unit "ms" is not one of s, By, 1 or a {count} annotation such as {call}',
      'metric milliseconds (toolbus.x.duration): durations are measured in seconds (unit "s"), as OTel\'s conventions ask',
      "metric silent (toolbus.a.c): describe what it measures",
      'metric perCall (toolbus.a.d): attribute "mcp.call_id" has a value per call or session; keep it on spans, not metrics',
      'metric perCall (toolbus.a.d): attribute "Bad-Name" is not a dotted lower-case name',
      'metric perCall (toolbus.a.d): attribute "x" is listed twice',
      "metric buckets (toolbus.a.e): only a histogram has bucket boundaries",
      "metric buckets (toolbus.a.e): bucket boundaries must increase",
    ]);
  });
});

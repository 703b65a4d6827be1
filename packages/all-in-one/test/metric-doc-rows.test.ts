import type { MetricSpec } from "@toolbus/bus";
import { describe, expect, it } from "vitest";
import { metricDocRows } from "./support/metric-doc-rows.js";

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

describe("metricDocRows", () => {
  it("gives one README row per instrument, in declaration order", () => {
    expect(metricDocRows([calls, duration, { ...calls, kind: "gauge", name: "toolbus.g" }])).toEqual([
      {
        metric: "`toolbus.dispatcher.calls`",
        type: "counter",
        unit: "`{call}`",
        attributes: "`mcp.server`, `toolbus.call.status`",
        meaning: "Calls answered.",
      },
      {
        metric: "`toolbus.dispatcher.call.duration`",
        type: "histogram",
        unit: "`s`",
        attributes: "—",
        meaning: "Time per call.",
      },
      {
        metric: "`toolbus.g`",
        type: "gauge",
        unit: "`{call}`",
        attributes: "`mcp.server`, `toolbus.call.status`",
        meaning: "Calls answered.",
      },
    ]);
  });
});

/** The rows of docs/operations.md's metrics table that the declared metric specs call for. */
import type { InstrumentKind, MetricSpec } from "@toolbus/bus";

/** One row of docs/operations.md's metrics table, as markdown cell text. */
export interface MetricDocRow {
  metric: string;
  type: string;
  unit: string;
  attributes: string;
  meaning: string;
}

const TYPE_NAMES: Record<InstrumentKind, string> = {
  counter: "counter",
  "up-down-counter": "up-down counter",
  histogram: "histogram",
  gauge: "gauge",
};

/** The table rows documenting `specs`, in declaration order. */
export function metricDocRows(specs: Iterable<MetricSpec>): MetricDocRow[] {
  const code = (text: string) => `\`${text}\``;
  return [...specs].map((spec) => ({
    metric: code(spec.name),
    type: TYPE_NAMES[spec.kind],
    unit: code(spec.unit),
    attributes: spec.attributes.length === 0 ? "—" : spec.attributes.map(code).join(", "),
    meaning: spec.description,
  }));
}

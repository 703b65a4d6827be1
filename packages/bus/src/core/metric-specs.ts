/**
 * Metric declarations as data: what each instrument is called, measures and is broken down by.
 * Services declare theirs in one place (`defineMetrics`); the rules below keep them in the
 * `toolbus.` namespace, with OTel units and low-cardinality attributes only (docs/operations.md's metrics
 * table is checked against them by packages/all-in-one/test/metrics-doc.test.ts).
 */

export type InstrumentKind = "counter" | "up-down-counter" | "histogram" | "gauge";

export interface MetricSpec {
  kind: InstrumentKind;
  /** Dotted, in the `toolbus.` namespace: `toolbus.dispatcher.calls`. */
  name: string;
  /** UCUM as OTel uses it: `s` for durations, `{call}`-style annotations for counts. */
  unit: string;
  /** One sentence: what one unit of this metric is. */
  description: string;
  /** Every attribute a data point may carry; each must have a small, bounded set of values. */
  attributes: readonly string[];
  /** Histogram bucket boundaries, increasing; default `DURATION_BUCKETS_S`. */
  boundaries?: readonly number[];
}

/** Seconds, from a fast bus round trip to a call that waited minutes for a human. */
export const DURATION_BUCKETS_S: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900,
];

const NAME = /^toolbus(\.[a-z][a-z0-9_]*)+$/;
const ATTRIBUTE = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/;
/** `s`, `By`, `1`, or a count annotation like `{call}`. */
const UNIT = /^(s|By|1|\{[a-z_]+\})$/;
/** Values unique per call, message or session: they would make a series per event. */
const HIGH_CARDINALITY = /(call_id|thread_id|turn_id|request_id|message_id|session\.id|arguments)$/;

/** Every problem with a set of declarations, one line each naming the instrument; empty when fine. */
export function metricSpecProblems(specs: Readonly<Record<string, MetricSpec>>): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const [key, spec] of Object.entries(specs)) {
    const at = `metric ${key} (${spec.name})`;
    if (!NAME.test(spec.name)) {
      problems.push(
        `${at}: the name must be dotted lower-case words under "toolbus.", e.g. toolbus.catalog.revision`,
      );
    }
    if (seen.has(spec.name)) problems.push(`${at}: the name is declared twice`);
    seen.add(spec.name);
    if (!UNIT.test(spec.unit)) {
      problems.push(
        `${at}: unit "${spec.unit}" is not one of s, By, 1 or a {count} annotation such as {call}`,
      );
    }
    if (/\.(duration|lag)$/.test(spec.name) && spec.unit !== "s") {
      problems.push(`${at}: durations are measured in seconds (unit "s"), as OTel's conventions ask`);
    }
    if (spec.description.trim() === "") problems.push(`${at}: describe what it measures`);
    const attributes = new Set<string>();
    for (const attribute of spec.attributes) {
      if (!ATTRIBUTE.test(attribute))
        problems.push(`${at}: attribute "${attribute}" is not a dotted lower-case name`);
      if (HIGH_CARDINALITY.test(attribute)) {
        problems.push(
          `${at}: attribute "${attribute}" has a value per call or session; keep it on spans, not metrics`,
        );
      }
      if (attributes.has(attribute)) problems.push(`${at}: attribute "${attribute}" is listed twice`);
      attributes.add(attribute);
    }
    if (spec.boundaries !== undefined) {
      if (spec.kind !== "histogram") problems.push(`${at}: only a histogram has bucket boundaries`);
      if (!spec.boundaries.every((bound, i, all) => i === 0 || bound > all[i - 1]!)) {
        problems.push(`${at}: bucket boundaries must increase`);
      }
    }
  }
  return problems;
}

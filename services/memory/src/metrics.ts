/** The memory service's metrics, recorded by the ingest loop (adapters/nats/ingest-loop.ts). */
import { defineMetrics, type Instruments } from "@toolbus/bus";
import type { BatchTally } from "./handlers/ingest-batch.js";

export const MEMORY_METRICS = defineMetrics("@toolbus/memory", {
  ingested: {
    kind: "counter",
    name: "toolbus.memory.messages.ingested",
    unit: "{message}",
    description:
      "Memory messages taken off the stream and settled, by result (`counted`, or `duplicate` for a messageId counted before).",
    attributes: ["toolbus.memory.result"],
  },
  citations: {
    kind: "counter",
    name: "toolbus.memory.citations.counted",
    unit: "{citation}",
    description: "Citation mentions added to rollouts' usage counts.",
    attributes: [],
  },
  parked: {
    kind: "counter",
    name: "toolbus.memory.messages.parked",
    unit: "{message}",
    description:
      "Memory messages set aside instead of counted (not a MemoryMessage, or failed on every delivery); listed by `<prefix>.memory.parked`.",
    attributes: [],
  },
  ingestLag: {
    kind: "histogram",
    name: "toolbus.memory.ingest.lag",
    unit: "s",
    description:
      "Seconds from a memory message's publish (its stream timestamp) to its acknowledgement, redeliveries and database outages included.",
    attributes: [],
    boundaries: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600],
  },
});

export type MemoryInstruments = Instruments<(typeof MEMORY_METRICS)["specs"]>;

const COUNTED = { "toolbus.memory.result": "counted" } as const;
const DUPLICATE = { "toolbus.memory.result": "duplicate" } as const;

export function memoryRecorder(instruments: MemoryInstruments = MEMORY_METRICS.create()) {
  return {
    /** A settled batch's tally. */
    batch(tally: BatchTally): void {
      if (tally.counted > 0) instruments.ingested.add(tally.counted, COUNTED);
      if (tally.duplicates > 0) instruments.ingested.add(tally.duplicates, DUPLICATE);
      if (tally.parked > 0) instruments.parked.add(tally.parked);
      if (tally.citations > 0) instruments.citations.add(tally.citations);
    },
    /** One message acknowledged, published at `publishedMs` (epoch ms). */
    acknowledged(publishedMs: number, nowMs: number): void {
      instruments.ingestLag.record(Math.max(0, nowMs - publishedMs) / 1000);
    },
  };
}

export type MemoryRecorder = ReturnType<typeof memoryRecorder>;

/**
 * CPU per call and memory of the processes behind a benchmark's calls (issue 14): each watched
 * process is read from /proc before and after each batch of calls, the ticks in between added
 * up per edge and run, and divided by the calls of those batches. What a process spends with no
 * calls, measured apart, says how much of that is background. Rows for the CPU table (with each
 * edge's total) and the RSS table, each against its aim where it has one.
 */
import { performance } from "node:perf_hooks";
import type { BenchRow } from "./bench-table.js";
import {
  clockTicksPerSecond,
  cpuTicksBetween,
  type ProcessStat,
  readProcessTable,
  readRssKb,
} from "./process-usage.js";

/** Issue 14: CPU per call on the hot path, µs, for each toolbus service on it. */
export const CPU_AIM_MICROS = { gateway: 250, dispatcher: 150, catalog: 150 } as const;
/** Issue 14: each toolbus service's resident memory idle and after 10,000 calls, MB. */
export const RSS_AIM_MB = { idle: 100, loaded: 150 } as const;

/** A process, or a group (a server's children), whose use is counted for an edge. */
export interface Watched {
  edge: string;
  process: string;
  /** The processes it is now, found in a table of every process. */
  pids(table: ReadonlyMap<number, ProcessStat>): number[];
  /** Issue 14's aim for CPU per call on the hot path, in µs. */
  cpuAimMicros?: number;
  /** Issue 14's aims for resident memory, in MB. */
  rssAimMb?: { idle: number; loaded: number };
  /** Said beside its rows (shared with other work, a child of which process). */
  note?: string;
}

interface Tally {
  watched: Watched;
  run: string;
  calls: number;
  ticks: number;
  /** Wall time of the batches, for the share of the process's idle CPU that fell in them. */
  wallMs: number;
  /** Ticks a millisecond the process spends with no calls; undefined when not measured. */
  idleTicksPerMs: number | undefined;
}

export class CpuPerCall {
  readonly #tallies = new Map<string, Tally>();
  readonly #idleTicksPerMs = new Map<Watched, number>();

  /**
   * What each watched process spends with no calls at all (timers, heartbeats, watches), over
   * `ms` of waiting: the rows then say how much of each call's CPU that background accounts for.
   */
  async idle(watched: readonly Watched[], ms: number): Promise<void> {
    const before = readProcessTable();
    const started = performance.now();
    await new Promise((resolve) => setTimeout(resolve, ms));
    const after = readProcessTable();
    const elapsed = performance.now() - started;
    for (const each of watched) {
      this.#idleTicksPerMs.set(each, cpuTicksBetween(before, after, each.pids(after)) / elapsed);
    }
  }

  /**
   * Runs `batch` between two readings of /proc and adds its calls and each watched process's
   * ticks to `run` (say `c=16`); batches of one run add up.
   */
  async around<T extends { calls: number }>(
    watched: readonly Watched[],
    run: string,
    batch: () => Promise<T>,
  ): Promise<T> {
    const before = readProcessTable();
    const started = performance.now();
    const result = await batch();
    const wallMs = performance.now() - started;
    const after = readProcessTable();
    for (const each of watched) {
      const key = `${each.edge}\u0000${run}\u0000${each.process}`;
      const tally = this.#tallies.get(key) ?? {
        watched: each,
        run,
        calls: 0,
        ticks: 0,
        wallMs: 0,
        idleTicksPerMs: this.#idleTicksPerMs.get(each),
      };
      tally.calls += result.calls;
      tally.ticks += cpuTicksBetween(before, after, each.pids(after));
      tally.wallMs += wallMs;
      this.#tallies.set(key, tally);
    }
    return result;
  }

  /** One row per watched process and run, then the edge's total for that run. */
  rows(): BenchRow[] {
    const groups = new Map<string, Tally[]>();
    for (const tally of this.#tallies.values()) {
      const key = `${tally.watched.edge}\u0000${tally.run}`;
      groups.set(key, [...(groups.get(key) ?? []), tally]);
    }
    return [...groups.values()].flatMap((tallies) => {
      const first = tallies[0]!;
      const idle = tallies.map((tally) => tally.idleTicksPerMs);
      const total: Tally = {
        watched: { edge: first.watched.edge, process: `all of ${first.watched.edge}`, pids: () => [] },
        run: first.run,
        calls: first.calls,
        ticks: tallies.reduce((sum, tally) => sum + tally.ticks, 0),
        wallMs: first.wallMs,
        idleTicksPerMs: idle.some((rate) => rate === undefined)
          ? undefined
          : idle.reduce((sum: number, rate) => sum + rate!, 0),
      };
      return [...tallies, total].map(cpuRow);
    });
  }
}

function cpuRow(tally: Tally): BenchRow {
  const { watched, run, calls, ticks, wallMs, idleTicksPerMs } = tally;
  const tickMicros = 1_000_000 / clockTicksPerSecond();
  const perCall = calls > 0 ? (ticks * tickMicros) / calls : Number.NaN;
  const idlePerCall =
    calls > 0 && idleTicksPerMs !== undefined ? (idleTicksPerMs * wallMs * tickMicros) / calls : Number.NaN;
  const aim = watched.cpuAimMicros;
  return {
    name: watched.process,
    edge: watched.edge,
    run,
    calls,
    "CPU µs/call": Number.isNaN(perCall) ? "" : Math.round(perCall),
    "of it idle µs/call": Number.isNaN(idlePerCall) ? "" : Math.round(idlePerCall),
    "1 tick µs/call": calls > 0 ? Math.round((tickMicros / calls) * 10) / 10 : "",
    "aim µs": aim ?? "",
    "met?": aim === undefined ? "" : calls === 0 ? "no calls" : perCall <= aim ? "met" : "missed",
    note: watched.note ?? "",
  };
}

/** Resident memory of each watched process (summed over a group), in kB, now. */
export function readRss(watched: readonly Watched[]): Map<Watched, number | undefined> {
  const table = readProcessTable();
  return new Map(
    watched.map((each) => {
      const sizes = each.pids(table).map(readRssKb);
      const known = sizes.filter((kb): kb is number => kb !== undefined);
      return [each, known.length === 0 ? undefined : known.reduce((sum, kb) => sum + kb, 0)];
    }),
  );
}

/** One row per watched process: idle and loaded RSS against its aims. */
export function rssRows(
  watched: readonly Watched[],
  idle: ReadonlyMap<Watched, number | undefined>,
  loaded: ReadonlyMap<Watched, number | undefined>,
): BenchRow[] {
  const mb = (kb: number | undefined) => (kb === undefined ? "" : Math.round(kb / 102.4) / 10);
  const verdict = (kb: number | undefined, aimMb: number | undefined) =>
    aimMb === undefined ? "" : kb === undefined ? "not read" : kb / 1024 < aimMb ? "met" : "missed";
  return watched.map((each) => ({
    name: each.process,
    edge: each.edge,
    "idle MB": mb(idle.get(each)),
    "aim idle MB": each.rssAimMb ? `< ${each.rssAimMb.idle}` : "",
    "idle met?": verdict(idle.get(each), each.rssAimMb?.idle),
    "loaded MB": mb(loaded.get(each)),
    "aim loaded MB": each.rssAimMb ? `< ${each.rssAimMb.loaded}` : "",
    "loaded met?": verdict(loaded.get(each), each.rssAimMb?.loaded),
    note: each.note ?? "",
  }));
}

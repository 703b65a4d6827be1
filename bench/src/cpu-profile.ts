/**
 * Where a service's CPU goes (issue 14: "the profile that shows where the remaining time goes").
 * With `TOOLBUS_BENCH_PROFILE=<dir>` the benches start each toolbus service with V8's sampling
 * profiler (`--cpu-prof`), which writes one profile per thread into `<dir>/<service>/` when the
 * service exits (a module loader may run on a thread of its own); this reads the main thread's
 * and sums the samples' self time by what the code belongs to (a package, node's own
 * internals, toolbus's own packages, garbage collection) and by function.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { BenchRow, BenchTable } from "./bench-table.js";

/** The variable that turns profiling on, and where the profiles go. */
export const PROFILE_DIR_VARIABLE = "TOOLBUS_BENCH_PROFILE";

/** Node flags that make a service write its CPU profiles into `<dir>/<service>/`, or none. */
export function profileFlags(service: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const dir = env[PROFILE_DIR_VARIABLE];
  if (!dir) return [];
  return ["--cpu-prof", `--cpu-prof-dir=${join(dir, service)}`];
}

/**
 * The main thread's profile among those node wrote into a service's directory: node names them
 * `CPU.<date>.<time>.<pid>.<thread id>.<sequence>.cpuprofile`, and the main thread's id is 0.
 */
export function mainThreadProfile(files: readonly string[]): string | undefined {
  return files.find((file) => file.endsWith(".cpuprofile") && file.split(".")[4] === "0");
}

/** The parts of a `.cpuprofile` (Chrome DevTools' format) this reads. */
export interface CpuProfile {
  nodes: Array<{
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
  }>;
  samples: number[];
  timeDeltas: number[];
}

/** Self time in microseconds, summed by `keyOf` over every sample, highest first. */
export function selfTime(
  profile: CpuProfile,
  keyOf: (frame: CpuProfile["nodes"][number]["callFrame"]) => string,
): Array<{ key: string; micros: number }> {
  const keyById = new Map(profile.nodes.map((node) => [node.id, keyOf(node.callFrame)]));
  const totals = new Map<string, number>();
  profile.samples.forEach((id, index) => {
    const key = keyById.get(id) ?? "(unknown)";
    totals.set(key, (totals.get(key) ?? 0) + (profile.timeDeltas[index] ?? 0));
  });
  return [...totals].map(([key, micros]) => ({ key, micros })).sort((a, b) => b.micros - a.micros);
}

/**
 * What a frame's code belongs to: the package under node_modules (scope included), a toolbus
 * package or service, node's own internals, or V8's pseudo-frames (GC, idle, program).
 */
export function owner(frame: { functionName: string; url: string }): string {
  const { url, functionName } = frame;
  if (url === "") return functionName.startsWith("(") ? functionName : "(native)";
  if (url.startsWith("node:")) return "node internals";
  const modules = url.lastIndexOf("/node_modules/");
  if (modules >= 0) {
    const [first, second] = url.slice(modules + "/node_modules/".length).split("/");
    return first?.startsWith("@") ? `${first}/${second}` : (first ?? url);
  }
  const own = /\/(services|packages)\/([^/]+)\//.exec(url);
  if (!own) return url;
  return own[1] === "services" ? `toolbus ${own[2]}` : `toolbus package ${own[2]}`;
}

/** A function and where it is, short enough for a table. */
function where(frame: CpuProfile["nodes"][number]["callFrame"]): string {
  const file = frame.url.split("/").slice(-2).join("/");
  return `${frame.functionName || "(anonymous)"} ${file ? `${file}:${frame.lineNumber + 1}` : ""}`.trim();
}

/**
 * Rows for each profile in the directory: its busy time, then its top owners and its top
 * functions by self time, as shares of the busy time (idle samples left out).
 */
export function profileRows(dir: string, top = 8): BenchRow[] {
  const rows: BenchRow[] = [];
  const services = readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isDirectory());
  for (const service of services.map((entry) => entry.name).sort()) {
    const file = mainThreadProfile(readdirSync(join(dir, service)));
    if (file === undefined) {
      rows.push({
        name: service,
        of: "busy",
        share: "no profile (the service did not exit cleanly)",
        what: "",
      });
      continue;
    }
    const profile = JSON.parse(readFileSync(join(dir, service, file), "utf8")) as CpuProfile;
    const total = profile.timeDeltas.reduce((sum, delta) => sum + delta, 0);
    const owners = selfTime(profile, owner).filter((entry) => entry.key !== "(idle)");
    const busy = owners.reduce((sum, entry) => sum + entry.micros, 0);
    const share = (micros: number) => `${((100 * micros) / busy).toFixed(1)} %`;
    rows.push({
      name: service,
      of: "busy",
      share: `${(busy / 1e6).toFixed(1)} s of ${(total / 1e6).toFixed(1)} s`,
      what: "",
    });
    for (const entry of owners.slice(0, top)) {
      rows.push({ name: service, of: "owner", share: share(entry.micros), what: entry.key });
    }
    const functions = selfTime(profile, (frame) =>
      frame.url === "" ? frame.functionName : `${owner(frame)}: ${where(frame)}`,
    ).filter((entry) => entry.key !== "(idle)");
    for (const entry of functions.slice(0, top)) {
      rows.push({ name: service, of: "function", share: share(entry.micros), what: entry.key });
    }
  }
  return rows;
}

/** The profiles' table when profiling was asked for (the services have stopped), else nothing. */
export function profileTables(env: NodeJS.ProcessEnv = process.env): BenchTable[] {
  const dir = env[PROFILE_DIR_VARIABLE];
  if (!dir) return [];
  return [
    {
      title: `where each service's CPU went: self time by owner and by function, from V8's profiles in ${dir}`,
      rows: profileRows(dir),
    },
  ];
}

/**
 * What a process has used, from Linux's /proc: CPU time (utime + stime of /proc/<pid>/stat, all
 * its threads, in clock ticks) and resident memory (VmRSS of /proc/<pid>/status). CPU time moves
 * in whole ticks (10 ms at the usual 100 per second), so a per-call figure needs a run of a
 * thousand calls or more. Parsing is pure; the readers take one look at /proc each.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** The fields of /proc/<pid>/stat the benchmarks use. */
export interface ProcessStat {
  pid: number;
  /** The executable's name, at most 15 characters (`node`, `nats-server`). */
  comm: string;
  ppid: number;
  /** utime + stime: user and system CPU time of every thread, in clock ticks. */
  cpuTicks: number;
}

/**
 * One line of /proc/<pid>/stat: "pid (comm) state ppid … utime stime …". comm may hold spaces
 * and parentheses, so the fields are counted from its last ")".
 */
export function parseStat(text: string): ProcessStat {
  const open = text.indexOf(" (");
  const close = text.lastIndexOf(")");
  if (open < 0 || close < open) throw new Error(`not a /proc/<pid>/stat line: ${text.slice(0, 80)}`);
  // From field 3 (state) on: ppid is field 4, utime 14, stime 15.
  const fields = text
    .slice(close + 2)
    .trim()
    .split(" ");
  const field = (n: number) => Number(fields[n - 3]);
  const stat = {
    pid: Number(text.slice(0, open)),
    comm: text.slice(open + 2, close),
    ppid: field(4),
    cpuTicks: field(14) + field(15),
  };
  if (!Number.isInteger(stat.pid) || !Number.isInteger(stat.ppid) || !Number.isInteger(stat.cpuTicks)) {
    throw new Error(`not a /proc/<pid>/stat line: ${text.slice(0, 80)}`);
  }
  return stat;
}

/** VmRSS of /proc/<pid>/status, in kB; undefined for a process without memory of its own (a zombie). */
export function parseVmRssKb(status: string): number | undefined {
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  return match ? Number(match[1]) : undefined;
}

/** Every process below `root` in `table`, children before their own children. */
export function descendantsIn(table: ReadonlyMap<number, ProcessStat>, root: number): number[] {
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    for (const stat of table.values()) {
      if (stat.ppid === parent) {
        found.push(stat.pid);
        queue.push(stat.pid);
      }
    }
  }
  return found;
}

/**
 * CPU ticks between two tables, summed over `pids` that are in both: a process that started
 * in between brings its start-up, one that ended took its last ticks along, and neither is the
 * work of the calls in between.
 */
export function cpuTicksBetween(
  before: ReadonlyMap<number, ProcessStat>,
  after: ReadonlyMap<number, ProcessStat>,
  pids: readonly number[],
): number {
  let ticks = 0;
  for (const pid of pids) {
    const from = before.get(pid);
    const to = after.get(pid);
    if (from && to && from.comm === to.comm) ticks += to.cpuTicks - from.cpuTicks;
  }
  return ticks;
}

/** Every process on the machine now, by pid (one read of /proc/<pid>/stat each). */
export function readProcessTable(): Map<number, ProcessStat> {
  const table = new Map<number, ProcessStat>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = parseStat(readFileSync(`/proc/${entry}/stat`, "utf8"));
      table.set(stat.pid, stat);
    } catch {
      // gone meanwhile
    }
  }
  return table;
}

/** Every process below `root` now. */
export function descendants(root: number | undefined): number[] {
  return root === undefined ? [] : descendantsIn(readProcessTable(), root);
}

/** Resident memory of `pid` in kB, undefined once it is gone. */
export function readRssKb(pid: number): number | undefined {
  try {
    return parseVmRssKb(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return undefined;
  }
}

let ticksPerSecond: number | undefined;

/** Clock ticks per second of /proc's CPU times (`getconf CLK_TCK`; 100 nearly everywhere). */
export function clockTicksPerSecond(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** True where /proc has the files above (Linux). */
export function procAvailable(): boolean {
  try {
    readFileSync("/proc/self/stat", "utf8");
    return true;
  } catch {
    return false;
  }
}

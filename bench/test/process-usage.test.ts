import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CpuPerCall, type Watched } from "../src/cpu-per-call.js";
import {
  clockTicksPerSecond,
  cpuTicksBetween,
  descendantsIn,
  type ProcessStat,
  parseStat,
  parseVmRssKb,
} from "../src/process-usage.js";

const stat = (pid: number, ppid: number, cpuTicks: number, comm = "node"): ProcessStat => ({
  pid,
  comm,
  ppid,
  cpuTicks,
});
const table = (...stats: ProcessStat[]) => new Map(stats.map((each) => [each.pid, each]));

describe("reading /proc", () => {
  it("reads this process's pid, name, parent and CPU time from its real /proc/self/stat", () => {
    const parsed = parseStat(readFileSync("/proc/self/stat", "utf8"));
    expect({ pid: parsed.pid, comm: parsed.comm, ppid: parsed.ppid }).toEqual({
      pid: process.pid,
      comm: readFileSync("/proc/self/comm", "utf8").trimEnd(),
      ppid: process.ppid,
    });
    // Starting node and vitest alone takes more than one tick.
    expect(parsed.cpuTicks).toBeGreaterThan(0);
  });

  it("takes utime + stime and finds the fields after a name holding spaces and parentheses", () => {
    // Fields 3 … 15: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime.
    const line = "4242 (node (vitest) 1) S 17 4242 4242 0 -1 4194560 900 0 3 0 250 31 0 0 20 0 11 0\n";
    expect(parseStat(line)).toEqual({ pid: 4242, comm: "node (vitest) 1", ppid: 17, cpuTicks: 281 });
  });

  it("refuses text that is not a stat line", () => {
    expect(() => parseStat("Name:\tnode\nState:\tS (sleeping)\n")).toThrow("not a /proc/<pid>/stat line");
  });

  it("reads VmRSS in kB from a real /proc/self/status, none for a process without memory of its own", () => {
    const kb = parseVmRssKb(readFileSync("/proc/self/status", "utf8"));
    const rssKb = process.memoryUsage().rss / 1024;
    expect(kb).toBeGreaterThan(rssKb * 0.8);
    expect(kb).toBeLessThan(rssKb * 1.25);
    expect(parseVmRssKb("Name:\tkthreadd\nState:\tS (sleeping)\nThreads:\t1\n")).toBeUndefined();
  });

  it("finds a process's children before their own children, and nobody else's", () => {
    const processes = table(stat(1, 0, 0), stat(10, 1, 0), stat(11, 10, 0), stat(12, 11, 0), stat(13, 10, 0));
    expect(descendantsIn(processes, 10)).toEqual([11, 13, 12]);
    expect(descendantsIn(processes, 12)).toEqual([]);
  });

  it("counts CPU ticks only of the processes there before and after, not a new one nor a reused pid", () => {
    const before = table(stat(10, 1, 100), stat(11, 10, 50), stat(12, 10, 7, "sh"));
    const after = table(stat(10, 1, 130), stat(11, 10, 55), stat(12, 10, 3, "node"), stat(13, 10, 400));
    expect(cpuTicksBetween(before, after, [10, 11, 12, 13])).toBe(35);
  });
});

describe("CPU per call", () => {
  it("divides the CPU a process spent during the calls by the calls and says whether it met its aim", async () => {
    const self = (name: string, cpuAimMicros: number): Watched => ({
      edge: "this test",
      process: name,
      pids: () => [process.pid],
      cpuAimMicros,
    });
    const watched = [self("generous", 5_000), self("strict", 1_000)];
    const cpu = new CpuPerCall();
    await cpu.idle(watched, 300);
    // 200 ms of CPU for 100 "calls": 2,000 µs a call, give or take a tick (10 ms = 100 µs a call).
    const burned = await cpu.around(watched, "c=1", async () => {
      const from = process.cpuUsage();
      for (;;) {
        const used = process.cpuUsage(from);
        if (used.user + used.system >= 200_000) break;
      }
      return { calls: 100 };
    });
    expect(burned).toEqual({ calls: 100 });
    const rows = cpu.rows();
    expect(rows.map((row) => [row.name, row.run, row.calls, row["met?"]])).toEqual([
      ["generous", "c=1", 100, "met"],
      ["strict", "c=1", 100, "missed"],
      ["all of this test", "c=1", 100, ""],
    ]);
    const tickPerCall = 1_000_000 / clockTicksPerSecond() / 100;
    expect(rows[0]!["CPU µs/call"]).toBeGreaterThanOrEqual(2_000 - 2 * tickPerCall);
    // Other threads of this process (the runner's) may add a little.
    expect(rows[0]!["CPU µs/call"]).toBeLessThanOrEqual(2_000 + 5 * tickPerCall);
    // This process waiting spends next to nothing: a few ticks at most over the burn's time.
    expect(rows[0]!["of it idle µs/call"]).toBeGreaterThanOrEqual(0);
    expect(rows[0]!["of it idle µs/call"]).toBeLessThan(1_000);
    // The edge's total is both rows' ticks: this process counted twice.
    expect(
      Math.abs((rows[2]!["CPU µs/call"] as number) - 2 * (rows[0]!["CPU µs/call"] as number)),
    ).toBeLessThanOrEqual(1);
  });
});

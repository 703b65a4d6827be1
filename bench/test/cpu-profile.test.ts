import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  type CpuProfile,
  mainThreadProfile,
  owner,
  profileFlags,
  profileRows,
  selfTime,
} from "../src/cpu-profile.js";

const frame = (functionName: string, url: string, lineNumber = 0) => ({ functionName, url, lineNumber });

/** A profile of four functions; the samples' time deltas are each function's self time. */
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame("(root)", "") },
    { id: 2, callFrame: frame("(idle)", "") },
    {
      id: 3,
      callFrame: frame("parse", "file:///r/node_modules/.pnpm/zod@4.1.0/node_modules/zod/v4/core.js", 9),
    },
    { id: 4, callFrame: frame("publish", "file:///r/node_modules/@nats-io/nats-core/lib/nats.js") },
    { id: 5, callFrame: frame("callTool", "file:///r/services/gateway/src/handlers/tools-call.ts", 41) },
    { id: 6, callFrame: frame("writeGeneric", "node:internal/stream_base_commons") },
    { id: 7, callFrame: frame("(garbage collector)", "") },
  ],
  samples: [3, 3, 4, 5, 6, 7, 2, 3],
  timeDeltas: [100, 100, 50, 25, 10, 15, 1000, 100],
};

describe("a service's CPU profile, read for the bench's table", () => {
  it("sums self time by the package, toolbus part or V8 pseudo-frame the code belongs to", () => {
    expect(selfTime(profile, owner)).toEqual([
      { key: "(idle)", micros: 1000 },
      { key: "zod", micros: 300 },
      { key: "@nats-io/nats-core", micros: 50 },
      { key: "toolbus gateway", micros: 25 },
      { key: "(garbage collector)", micros: 15 },
      { key: "node internals", micros: 10 },
    ]);
  });

  it("names toolbus's packages apart from its services", () => {
    expect(owner(frame("f", "file:///r/packages/bus/src/request.ts"))).toBe("toolbus package bus");
    expect(owner(frame("f", "file:///r/services/dispatcher/src/x.ts"))).toBe("toolbus dispatcher");
  });

  describe("rows from a directory of profiles", () => {
    let dir: string | undefined;
    afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

    it("give each service's busy time, its owners and its functions as shares of the busy time", () => {
      dir = mkdtempSync(join(tmpdir(), "toolbus-profile-"));
      mkdirSync(join(dir, "gateway"));
      // The module loader's thread (id 1) is not the service's work.
      writeFileSync(join(dir, "gateway", "CPU.20261201.233000.4242.1.002.cpuprofile"), "{}");
      writeFileSync(
        join(dir, "gateway", "CPU.20261201.233000.4242.0.001.cpuprofile"),
        JSON.stringify(profile),
      );
      const rows = profileRows(dir, 2);
      expect(rows[0]).toEqual({ name: "gateway", of: "busy", share: "0.0 s of 0.0 s", what: "" });
      expect(rows.slice(1)).toEqual([
        { name: "gateway", of: "owner", share: "75.0 %", what: "zod" },
        { name: "gateway", of: "owner", share: "12.5 %", what: "@nats-io/nats-core" },
        { name: "gateway", of: "function", share: "75.0 %", what: "zod: parse v4/core.js:10" },
        {
          name: "gateway",
          of: "function",
          share: "12.5 %",
          what: "@nats-io/nats-core: publish lib/nats.js:1",
        },
      ]);
    });
  });

  it("turns profiling on only when asked, one directory per service", () => {
    expect(profileFlags("gateway", {})).toEqual([]);
    expect(profileFlags("gateway", { TOOLBUS_BENCH_PROFILE: "/tmp/p" })).toEqual([
      "--cpu-prof",
      "--cpu-prof-dir=/tmp/p/gateway",
    ]);
  });

  it("reads the main thread's profile, not a worker's", () => {
    expect(
      mainThreadProfile([
        "CPU.20261201.233000.4242.1.002.cpuprofile",
        "CPU.20261201.233000.4242.0.001.cpuprofile",
      ]),
    ).toBe("CPU.20261201.233000.4242.0.001.cpuprofile");
    expect(mainThreadProfile(["CPU.20261201.233000.4242.1.002.cpuprofile"])).toBeUndefined();
  });
});

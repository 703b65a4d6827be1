/**
 * Issue 16's chaos scenarios, trimmed for CI: toolbus on a 3-node NATS cluster with two of every
 * service, a steady load of calls through both gateways (each retried with its callId while it
 * has no answer), and one fault per scenario: a dispatcher, a catalog replica, a gateway, a NATS
 * node; then tasks whose gateway dies mid-run. Whatever dies, no call is lost, none runs twice, and every call that ran has exactly one
 * begin and one end event. `pnpm bench chaos` runs the full versions and prints the table.
 */
import { startCluster, type ToolbusCluster } from "@toolbus/testkit/cluster";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ScenarioRow } from "./chaos/load.js";
import { CHAOS_SCRIPT, CHAOS_TOML, CI_SETTINGS, memoryCounts, runChaos } from "./chaos/scenarios.js";
import { TASK_SCENARIO } from "./chaos/tasks.js";

let cluster: ToolbusCluster;
let rows: ScenarioRow[];

beforeAll(async () => {
  cluster = await startCluster({ readyTimeoutMs: 75_000, testServer: CHAOS_SCRIPT, toml: CHAOS_TOML });
  rows = await runChaos(cluster, CI_SETTINGS);
  console.log(rows);
}, 1_500_000);

afterAll(async () => {
  await cluster?.stop();
}, 60_000);

describe("under a steady load", () => {
  it.each([
    "no fault (baseline)",
    "kill -9 a dispatcher",
    "kill -9 a catalog replica of the server called",
    "kill -9 a gateway",
    "kill -9 a NATS node, restart it 5 s later",
    TASK_SCENARIO,
    "kill -9 an approvals replica with approvals pending",
    "restart Postgres with approvals pending",
  ])("%s: no call lost, none executed twice, every call that ran with its begin and end", (scenario) => {
    const row = rows.find((candidate) => candidate.scenario === scenario);
    expect(row).toBeDefined();
    expect({ lost: row!.lost, twice: row!["executed twice"], eventsMissing: row!["events missing"] }).toEqual(
      {
        lost: 0,
        twice: 0,
        eventsMissing: 0,
      },
    );
    // Every call was answered or got an error; the server ran each answered call once.
    expect(row!.answered + row!.errors).toBe(row!.sent);
    expect(row!.executed).toBeGreaterThanOrEqual(row!.answered);
  });
});

describe("memory messages published while Postgres restarts", () => {
  it("are each counted once after it is back", () => {
    expect(memoryCounts).toBeDefined();
    expect(memoryCounts!.counted).toBe(memoryCounts!.published);
  });
});

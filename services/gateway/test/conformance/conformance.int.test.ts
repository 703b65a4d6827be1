/**
 * The MCP conformance suite (server mode, --suite all) against the fixture directly and through
 * the gateway in `naming = "conditional"` mode: every scenario that passes directly passes
 * through the gateway, except the known gaps in suite.ts (which must still fail, or the list is
 * stale). `run.sh` does the same and prints the table. Then the suite's 2026-07-28 scenarios
 * through the same gateway: every one passes but the known gaps (which must still fail). Behind
 * the gateway are two upstreams: the 2025 fixture (stdio) and the 2026-07-28-only fixture
 * (fixture-2026.ts, streamable HTTP) with what the 2026 scenarios ask of a server beyond it.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { Stack, tomlFor } from "../support/stack.js";
import {
  compare,
  fixtureCommand,
  KNOWN_GAPS_2026,
  type RunningFixture,
  runSuite,
  type SuiteRun,
  startFixture2026Http,
  startFixtureHttp,
} from "./suite.js";

let direct: SuiteRun;
let stack: Stack;
let fixture2026: RunningFixture;

beforeAll(async () => {
  const fixture = await startFixtureHttp();
  try {
    direct = await runSuite(fixture.url);
  } finally {
    await fixture.stop();
  }
  const { command, args } = fixtureCommand();
  fixture2026 = await startFixture2026Http();
  stack = await Stack.start(
    "conformance",
    tomlFor([
      { name: "fixture", command, args },
      { name: "fixture_2026", url: fixture2026.url },
    ]),
  );
}, 400_000);

afterAll(async () => {
  await stack?.close();
  await fixture2026?.stop();
});

it("passes through the gateway every conformance scenario the fixture passes directly", async () => {
  const gateway = await stack.gateway({ naming: "conditional" });
  const through = await runSuite(`${gateway.url}/mcp`);
  const { regressions, staleGaps } = compare(direct.results, through.results);
  expect({
    directFailures: direct.results.filter((result) => result.failed > 0).map((result) => result.scenario),
    regressions,
    staleGaps,
    scenarios: through.results.length,
  }).toEqual({ directFailures: [], regressions: [], staleGaps: [], scenarios: direct.results.length });
}, 400_000);

it("passes through the gateway every 2026-07-28 conformance scenario but its known gaps", async () => {
  const gateway = await stack.gateway({ naming: "conditional" });
  const through = await runSuite(`${gateway.url}/mcp`, { specVersion: "2026-07-28" });
  const failing = through.results.filter((result) => result.failed > 0).map((result) => result.scenario);
  expect({
    unexpectedFailures: failing.filter((scenario) => KNOWN_GAPS_2026[scenario] === undefined),
    staleGaps: Object.keys(KNOWN_GAPS_2026).filter((scenario) => !failing.includes(scenario)),
    passing: through.results.length - failing.length,
  }).toEqual({ unexpectedFailures: [], staleGaps: [], passing: 40 });
}, 400_000);

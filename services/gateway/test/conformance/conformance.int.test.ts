/**
 * The MCP conformance suite (server mode, --suite all) against the fixture directly and through
 * the gateway in `naming = "conditional"` mode: every scenario that passes directly passes
 * through the gateway, except the known gaps in suite.ts (which must still fail, or the list is
 * stale). `run.sh` does the same and prints the table. Then the suite's 2026-07-28 scenarios
 * through the same gateway: every one passes but the known gaps (which must still fail).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { Stack, tomlFor } from "../support/stack.js";
import {
  compare,
  fixtureCommand,
  KNOWN_GAPS_2026,
  runSuite,
  type SuiteRun,
  startFixtureHttp,
} from "./suite.js";

let direct: SuiteRun;
let stack: Stack;

beforeAll(async () => {
  const fixture = await startFixtureHttp();
  try {
    direct = await runSuite(fixture.url);
  } finally {
    await fixture.stop();
  }
  const { command, args } = fixtureCommand();
  stack = await Stack.start("conformance", tomlFor([{ name: "fixture", command, args }]));
}, 400_000);

afterAll(async () => {
  await stack?.close();
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
  }).toEqual({ unexpectedFailures: [], staleGaps: [], passing: 29 });
}, 400_000);

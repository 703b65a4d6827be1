/**
 * `run.sh`: the conformance suite against the fixture directly, then through a toolbus gateway
 * (`naming = "conditional"`, catalog and dispatcher as processes, behind them the fixture as a
 * stdio server and the 2026-07-28-only fixture over streamable HTTP), and a table comparing the
 * two. Exit 1 when a scenario that passes directly fails through the gateway (other than a known
 * gap), or a known gap passes after all.
 * Needs NATS with JetStream at NATS_URL (default nats://127.0.0.1:4222).
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Stack, tomlFor } from "../support/stack.js";
import { compare, fixtureCommand, runSuite, startFixture2026Http, startFixtureHttp } from "./suite.js";

const { values } = parseArgs({ options: { out: { type: "string" } }, strict: true });
process.env.NATS_URL ||= "nats://127.0.0.1:4222";
const out = values.out;
if (out) await mkdir(out, { recursive: true });

const fixture = await startFixtureHttp();
console.log(`fixture (direct): ${fixture.url}`);
const direct = await runSuite(fixture.url, out ? { outputDir: join(out, "direct") } : {}).finally(() =>
  fixture.stop(),
);

const { command, args } = fixtureCommand();
const fixture2026 = await startFixture2026Http();
const stack = await Stack.start(
  "conformance",
  tomlFor([
    { name: "fixture", command, args },
    { name: "fixture_2026", url: fixture2026.url },
  ]),
).catch(async (error: unknown) => {
  await fixture2026.stop();
  throw error;
});
let gateway: Awaited<ReturnType<typeof runSuite>>;
try {
  const running = await stack.gateway({ naming: "conditional" });
  console.log(`gateway: ${running.url}/mcp (prefix ${stack.prefix})`);
  gateway = await runSuite(`${running.url}/mcp`, out ? { outputDir: join(out, "gateway") } : {});
} finally {
  await stack.close();
  await fixture2026.stop();
}

const { rows, regressions, staleGaps } = compare(direct.results, gateway.results);
const width = Math.max(...rows.map((row) => row.scenario.length));
console.log(`\n${"scenario".padEnd(width)}  direct  gateway`);
for (const row of rows) {
  console.log(
    `${row.scenario.padEnd(width)}  ${row.direct.padEnd(6)}  ${row.gateway.padEnd(7)}${row.note ? `  known gap: ${row.note}` : ""}`,
  );
}
const passedDirect = rows.filter((row) => row.direct === "pass").length;
const passedBoth = rows.filter((row) => row.direct === "pass" && row.gateway === "pass").length;
console.log(
  `\n${passedDirect}/${rows.length} pass directly; ${passedBoth} of them also pass through the gateway`,
);
if (regressions.length > 0)
  console.log(`REGRESSIONS (pass directly, fail through the gateway): ${regressions.join(", ")}`);
if (staleGaps.length > 0)
  console.log(`STALE known gaps (now pass through the gateway): ${staleGaps.join(", ")}`);
process.exit(regressions.length > 0 || staleGaps.length > 0 ? 1 : 0);

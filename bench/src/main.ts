/**
 * `pnpm bench`: runs every benchmark in turn and prints a table of rows for each (their columns
 * differ), or titled tables for one that measures more than one kind of thing. A benchmark that
 * fails prints a row saying so and the run goes on; the exit code is 1 then. Arguments select
 * benchmarks by name (`pnpm bench catalog`). The process ends by itself, also when a
 * benchmark leaves a handle open or hangs past the guard.
 */
import { runApprovalsBench } from "./approvals-decide.js";
import { type BenchResult, formatResult } from "./bench-table.js";
import { runCatalogListChangedBench } from "./catalog-list-changed.js";
import { runCatalogNormalizeBench } from "./catalog-normalize.js";
import { runChaosBench } from "./chaos.js";
import { runDispatchBench } from "./dispatch-call.js";
import { runGatewayAuthBench } from "./edge-auth.js";
import { runGatewayBench } from "./gateway-peers.js";
import { runMemoryBench } from "./memory-ingest.js";
import { runMetricsBench } from "./metrics-overhead.js";
import { runResourceRoutingBench } from "./resource-routing.js";

const BENCHES: ReadonlyArray<{ name: string; run: () => Promise<BenchResult> }> = [
  { name: "catalog-normalize", run: runCatalogNormalizeBench },
  { name: "catalog-list-changed", run: runCatalogListChangedBench },
  { name: "dispatch-call", run: runDispatchBench },
  { name: "approvals-decide", run: runApprovalsBench },
  { name: "memory-ingest", run: runMemoryBench },
  { name: "gateway-peers", run: runGatewayBench },
  { name: "edge-auth", run: runGatewayAuthBench },
  { name: "resource-routing", run: runResourceRoutingBench },
  { name: "metrics-overhead", run: runMetricsBench },
  { name: "chaos", run: runChaosBench },
];
const GUARD_MS = 30 * 60 * 1000;

const wanted = process.argv.slice(2);
const selected = BENCHES.filter((bench) => wanted.length === 0 || wanted.some((w) => bench.name.includes(w)));
if (selected.length === 0) {
  console.error(
    `no benchmark matches ${wanted.join(" ")}; there are: ${BENCHES.map((b) => b.name).join(", ")}`,
  );
  process.exit(2);
}
const guard = setTimeout(() => {
  console.error(`the benchmarks did not finish within ${GUARD_MS / 60_000} minutes; exiting`);
  process.exit(1);
}, GUARD_MS);
guard.unref();

const tables: string[] = [];
let failed = false;
for (const bench of selected) {
  const started = Date.now();
  console.error(`running ${bench.name} …`);
  let result: BenchResult;
  try {
    result = await bench.run();
  } catch (error) {
    failed = true;
    result = [{ name: `${bench.name} FAILED`, note: (error as Error).message.split("\n")[0] ?? "" }];
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.error(`${bench.name} took ${seconds} s`);
  tables.push(`${bench.name} (${seconds} s)\n${formatResult(result)}`);
}
console.log(tables.join("\n\n"));
process.exit(failed ? 1 : 0);

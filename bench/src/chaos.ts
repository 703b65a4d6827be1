/**
 * `pnpm bench chaos`: issue 16's chaos scenarios at full size (100 calls/s for 30 s each, on a
 * 3-node NATS cluster with two of every service): per scenario, calls sent, answered, errors
 * returned, executed on the server, lost, executed twice, events missing, and the seconds from
 * the fault to the first call after it that completed on its first try. The scenarios live with
 * their CI test (test/cluster/chaos), loaded by path so this package builds without them.
 */
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { BenchRow } from "./bench-table.js";

interface ChaosModule {
  BENCH_SETTINGS: unknown;
  CHAOS_SCRIPT: unknown;
  CHAOS_TOML: unknown;
  runChaos(cluster: unknown, settings: unknown): Promise<BenchRow[]>;
}

interface ClusterModule {
  startCluster(options: unknown): Promise<{ stop(): Promise<void> }>;
}

export async function runChaosBench(): Promise<BenchRow[]> {
  const root = fileURLToPath(new URL("../../", import.meta.url));
  const load = (path: string) => import(pathToFileURL(join(root, path)).href);
  const chaos = (await load("test/cluster/chaos/scenarios.ts")) as ChaosModule;
  const { startCluster } = (await load("packages/testkit/src/cluster/index.ts")) as ClusterModule;
  const cluster = await startCluster({ testServer: chaos.CHAOS_SCRIPT, toml: chaos.CHAOS_TOML });
  try {
    return await chaos.runChaos(cluster, chaos.BENCH_SETTINGS);
  } finally {
    await cluster.stop();
  }
}

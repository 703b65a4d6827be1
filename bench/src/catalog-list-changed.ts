import { performance } from "node:perf_hooks";
import { Kvm, KvWatchInclude } from "@nats-io/kv";
import { connect } from "@nats-io/transport-node";
import { connectBus, createLogger } from "@toolbus/bus";
import { startCatalogService } from "@toolbus/catalog";
import { parseToolbusToml } from "@toolbus/config";
import { type CatalogServerEntry, createSubjects } from "@toolbus/protocol";
import { cleanupJetStream, isolation, provisionPrefix } from "@toolbus/testkit";
import { startTestServer, type TestServerScript } from "@toolbus/testkit/mcp-test-server";
import { type BenchRow, formatTable, isEntryModule, timings } from "./bench-table.js";

const WARMUP = 3;
const ROUNDS = 20;
const ROUND_TIMEOUT_MS = 10_000;

const scriptWith = (extra: string): TestServerScript => ({
  tools: [{ name: "echo" }, { name: "search", description: "Find things." }, { name: extra }],
});

export async function runCatalogListChangedBench(): Promise<BenchRow[]> {
  const natsUrl = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
  const { prefix } = isolation("bench_catalog");
  const subjects = createSubjects(prefix);
  const server = await startTestServer({ transport: "stdio", script: scriptWith("round-0") });
  const logger = createLogger({ service: "catalog", version: "bench", level: "warn" });
  // Before the service, as `toolbus provision` runs: the catalog bucket it writes.
  await provisionPrefix(natsUrl, prefix);
  const bus = await connectBus({ natsUrl, service: { name: "catalog", version: "0.1.0" }, logger });
  const watcherConnection = await connect({ servers: natsUrl });
  try {
    const config = parseToolbusToml(
      `[mcp_servers.srv]\ncommand = ${JSON.stringify(server.command)}\nargs = ${JSON.stringify(server.args)}\n`,
      { path: "bench/toolbus.toml" },
    );
    const service = await startCatalogService({
      bus,
      // The server's connector on a bus of its own, as deployed; the service closes it.
      connectorBus: (server) =>
        connectBus({ natsUrl, service: { name: `connector-${server}`, version: "0.1.0" }, logger }),
      subjects,
      config,
      env: process.env,
      logger,
    });
    const summary = await service.startup;
    if (summary.ready.length !== 1)
      throw new Error(`the test server did not start: ${JSON.stringify(summary)}`);

    const kv = await new Kvm(watcherConnection).open(subjects.kv.catalog);
    const current = (await kv.get("server.srv"))?.json<CatalogServerEntry>().revision ?? 0;
    const watch = await kv.watch({ key: "server.srv", include: KvWatchInclude.UpdatesOnly });
    const revisions = watchRevisions(watch, current);
    try {
      const samples: number[] = [];
      for (let round = 1; round <= WARMUP + ROUNDS; round++) {
        const seen = revisions.next();
        const started = performance.now();
        const applied = server.setScript(scriptWith(`round-${round}`));
        const revision = await seen;
        const elapsed = performance.now() - started;
        await applied;
        if (revision === undefined)
          throw new Error(`round ${round}: no new revision within ${ROUND_TIMEOUT_MS} ms`);
        if (round > WARMUP) samples.push(elapsed);
      }
      return [
        {
          name: "catalog list_changed → new revision in KV",
          ...timings(samples),
          note: "script change to KV watcher; goal < 100 ms",
        },
      ];
    } finally {
      watch.stop();
      await service.stop();
    }
  } finally {
    await bus.close();
    await watcherConnection.close();
    await server.dispose();
    await cleanupJetStream(natsUrl, prefix);
  }
}

/** Hands out the next new revision the watcher sees, or undefined when none comes in time. */
function watchRevisions(watch: AsyncIterable<{ operation: string; json<T>(): T }>, current: number) {
  let last = current;
  let waiting: ((revision: number | undefined) => void) | undefined;
  void (async () => {
    for await (const update of watch) {
      if (update.operation !== "PUT") continue;
      const { revision } = update.json<CatalogServerEntry>();
      if (revision <= last) continue; // a status change, not a new tool list
      last = revision;
      waiting?.(revision);
      waiting = undefined;
    }
  })();
  return {
    next(): Promise<number | undefined> {
      return new Promise((resolve) => {
        const timer = setTimeout(() => resolve(undefined), ROUND_TIMEOUT_MS);
        waiting = (revision) => {
          clearTimeout(timer);
          resolve(revision);
        };
      });
    },
  };
}

if (isEntryModule(import.meta.url)) {
  runCatalogListChangedBench().then(
    (rows) => {
      console.log(formatTable(rows));
      process.exit(0);
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}

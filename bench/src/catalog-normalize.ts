import { performance } from "node:perf_hooks";
import { buildCatalogSnapshot, type CatalogServerEntry } from "@toolbus/protocol";
import { type BenchRow, formatTable, isEntryModule, timings } from "./bench-table.js";

const SERVERS = 200;
const TOOLS_PER_SERVER = 50;
const WARMUP = 5;
const RUNS = 30;

const VERBS = ["get", "list", "create", "update", "delete", "search", "sync", "run"];
const NOUNS = ["issue", "file", "page", "record", "event", "user", "branch", "message"];

/** Tools shaped like real servers' ones: dashed names, a sentence of description, a small schema. */
function serverEntry(index: number): CatalogServerEntry {
  const server = `server-${String(index).padStart(3, "0")}`;
  const tools = Array.from({ length: TOOLS_PER_SERVER }, (_, i) => ({
    name: `${VERBS[i % VERBS.length]}-${NOUNS[(i >> 3) % NOUNS.length]}-${i}`,
    title: `Tool ${i} of ${server}`,
    description: `Does thing ${i} for ${server}: takes a query and options and returns matching records as JSON.`,
    inputSchema: {
      type: "object",
      properties: {
        query: { type: "string", description: "What to look for." },
        limit: { type: "integer", minimum: 1, maximum: 100 },
        options: {
          type: "object",
          properties: { exact: { type: "boolean" }, tags: { type: "array", items: { type: "string" } } },
        },
      },
      required: ["query"],
    },
    ...(i % 3 === 0 ? { annotations: { readOnlyHint: true } } : {}),
  }));
  return {
    server,
    status: "ready",
    required: false,
    revision: index + 1,
    origin: "stdio",
    tools,
    resourcesSupported: false,
    listedAt: new Date(0).toISOString(),
  };
}

export async function runCatalogNormalizeBench(): Promise<BenchRow[]> {
  const entries = Array.from({ length: SERVERS }, (_, i) => serverEntry(i));
  const variants = [
    { label: "model view", options: { exposure: "model" as const } },
    { label: "all, tool search on", options: { exposure: "all" as const, searchEnabled: true } },
  ];
  const rows: BenchRow[] = [];
  for (const { label, options } of variants) {
    const run = () => buildCatalogSnapshot(entries, { naming: {}, revision: SERVERS, ...options });
    let tools = 0;
    for (let i = 0; i < WARMUP; i++) tools = run().tools.length;
    const samples: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const started = performance.now();
      run();
      samples.push(performance.now() - started);
    }
    rows.push({
      name: `catalog normalize ${SERVERS}×${TOOLS_PER_SERVER} (${label})`,
      ...timings(samples),
      note: `${tools} tools; goal < 100 ms`,
    });
  }
  return rows;
}

if (isEntryModule(import.meta.url)) {
  runCatalogNormalizeBench().then(
    (rows) => console.log(formatTable(rows)),
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}

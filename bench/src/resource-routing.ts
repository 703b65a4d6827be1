/**
 * What routing one `resources/read` by URI costs the gateway (services/gateway, resource
 * routing): for ordinary servers, and for one hostile server with as many templates, as long,
 * as the caps let through, read with as long a URI as they allow. "longest slice" is the
 * longest the event loop was held between two pauses (the gateway yields after 5 ms): what
 * `/healthz` or, in the all-in-one, another service waits at most behind a read (a garbage
 * collection in a slice counts too).
 */
import { performance } from "node:perf_hooks";
import { RESOURCE_ROUTING_LIMITS, resourceDirectory, routeResource } from "@toolbus/gateway";
import { type BenchRow, formatTable, isEntryModule, ms, timings } from "./bench-table.js";

const RUNS = 20;
const SLICE_MS = 5;
const { templatesPerServer, templateLength, uriLength } = RESOURCE_ROUTING_LIMITS;

/** Ten servers with templates shaped like real ones. */
function ordinaryTemplates() {
  return Array.from({ length: 10 }, (_, s) =>
    [
      `srv${s}://repos/{owner}/{repo}/issues/{number}`,
      `srv${s}://repos/{owner}/{repo}/contents{/path*}`,
      `srv${s}://files/{+path}`,
      `srv${s}://search{?q,page}`,
      `srv${s}://users/{user}{.format}`,
    ].map((uriTemplate) => ({ uriTemplate, server: `server-${s}` })),
  ).flat();
}

/** Expressions repeated to the length cap; each is a shape a backtracking matcher chokes on. */
const HOSTILE_UNITS = ["{+a}", "{+a}a", "{+a}/{a}", "{/a}{+a}{.a}{a}", "{+a}ab"];

/** As many different templates as a server may list, the longest as long as one may be. */
function hostileTemplates(unit: string) {
  const longest = Math.floor((templateLength - 5) / unit.length);
  return Array.from({ length: templatesPerServer }, (_, i) => ({
    uriTemplate: `x://${(i % 2 ? unit : unit.replaceAll("a}", "b}")).repeat(Math.max(1, longest - (i >> 1)))}z`,
    server: "hostile",
  }));
}

/**
 * URIs of the longest length routed, none ending in the z the hostile templates need: regular
 * ones, and random ones (each new to the templates' DFAs).
 */
const HOSTILE_URIS = [
  `x://${"a".repeat(uriLength - 4)}`,
  `x://${"a/".repeat((uriLength - 4) / 2)}`,
  `x://${"/a.b;c".repeat(Math.floor((uriLength - 4) / 6))}`,
  `x://${"ab".repeat((uriLength - 4) / 2)}`,
  ...Array.from({ length: 16 }, () => `x://${randomText(uriLength - 4, "aab/.;?&=")}`),
];

function randomText(length: number, alphabet: string): string {
  return Array.from({ length }, () => alphabet[Math.floor(Math.random() * alphabet.length)]).join("");
}

/**
 * Routes `uris` in turn, `RUNS` times after a warm-up pass. Cold: a fresh directory each time, as
 * when the gateway first meets these templates, so every one compiles. Warm: one directory, as
 * the gateway keeps its matchers across listings.
 */
async function measure(
  templates: Array<{ uriTemplate: string; server: string }>,
  uris: string[],
  cold: boolean,
): Promise<{ samples: number[]; longestSliceMs: number }> {
  const samples: number[] = [];
  let longestSliceMs = 0;
  let directory = resourceDirectory({ resources: [], templates });
  for (let run = -uris.length; run < RUNS; run++) {
    if (cold) directory = resourceDirectory({ resources: [], templates });
    const uri = uris[(run + uris.length) % uris.length]!;
    let held = 0;
    let sliceStart = performance.now();
    const pause = async () => {
      held = Math.max(held, performance.now() - sliceStart);
      if (performance.now() - sliceStart < SLICE_MS) return;
      await new Promise((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    };
    const started = performance.now();
    await routeResource(uri, directory, pause);
    held = Math.max(held, performance.now() - sliceStart);
    if (run < 0) continue;
    samples.push(performance.now() - started);
    longestSliceMs = Math.max(longestSliceMs, held);
  }
  return { samples, longestSliceMs };
}

export async function runResourceRoutingBench(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const ordinary = ordinaryTemplates();
  const ordinaryUris = ["srv7://repos/o/r/contents/src/a/b.ts", "srv3://files/home/me/notes.md", "none://x"];
  const cases = [
    { label: `${ordinary.length} ordinary templates`, templates: ordinary, uris: ordinaryUris },
    ...HOSTILE_UNITS.map((unit) => ({
      label: `+ ${templatesPerServer} hostile x://${unit}…z, ${uriLength}-char URIs`,
      templates: [...ordinary, ...hostileTemplates(unit)],
      uris: HOSTILE_URIS,
    })),
  ];
  for (const { label, templates, uris } of cases) {
    for (const cold of [true, false]) {
      const { samples, longestSliceMs } = await measure(templates, uris, cold);
      const { runs: _runs, "min ms": _min, ...columns } = timings(samples);
      rows.push({
        name: `${label} (${cold ? "cold" : "warm"})`,
        ...columns,
        "longest slice ms": ms(longestSliceMs),
      });
    }
  }
  return rows;
}

if (isEntryModule(import.meta.url)) {
  runResourceRoutingBench().then(
    (rows) => console.log(formatTable(rows)),
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}

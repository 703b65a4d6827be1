/**
 * biome.json keeps core/ pure: an I/O import there is a lint error, the same import in adapters/
 * is not. Checked by linting probe files with the repo's own biome.json in a scratch tree, since
 * a probe in the real tree would fail `pnpm lint` itself.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { repoPath } from "../deploy/repo.js";

const IO_MODULES = ["node:fs", "node:fs/promises", "node:child_process", "@nats-io/kv", "pg", "pino"];

const scratch = mkdtempSync(join(tmpdir(), "toolbus-core-imports-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The files biome refused an import in, for one probe per module under `dir`. */
function refusedImports(dir: string): string[] {
  copyFileSync(repoPath("biome.json"), join(scratch, "biome.json"));
  for (const [index, module] of IO_MODULES.entries()) {
    const file = join(scratch, dir, `probe-${index}.ts`);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `import * as io from "${module}";\n\nexport const probe = io;\n`);
  }
  let output: string;
  try {
    output = execFileSync(repoPath("node_modules/.bin/biome"), ["lint", "--reporter=json", dir], {
      cwd: scratch,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
  } catch (error) {
    output = String((error as { stdout?: unknown }).stdout ?? "");
  }
  const report = JSON.parse(output.slice(output.indexOf("{"))) as {
    diagnostics: Array<{ category: string; location: { path: string } }>;
  };
  return report.diagnostics
    .filter((diagnostic) => diagnostic.category === "lint/style/noRestrictedImports")
    .map((diagnostic) => IO_MODULES[Number(/probe-(\d+)\.ts$/.exec(diagnostic.location.path)?.[1])] ?? "?")
    .sort();
}

describe("biome.json's rule for core/", () => {
  it("refuses every I/O import in core/, node: subpaths included, and none in adapters/", () => {
    expect({
      core: refusedImports("services/probe/src/core"),
      adapters: refusedImports("services/probe/src/adapters"),
    }).toEqual({ core: [...IO_MODULES].sort(), adapters: [] });
  });
});

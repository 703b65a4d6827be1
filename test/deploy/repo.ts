/** Reading the repository for the deployment tests: files, the workspace's packages and its services. */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";

export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

export function repoPath(relative: string): string {
  return join(repoRoot, relative);
}

export function readRepoFile(relative: string): string {
  return readFileSync(repoPath(relative), "utf8");
}

export function existsInRepo(relative: string): boolean {
  return existsSync(repoPath(relative));
}

export function isDirectoryInRepo(relative: string): boolean {
  return existsInRepo(relative) && statSync(repoPath(relative)).isDirectory();
}

export interface PackageJson {
  name: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  packageManager?: string;
}

export interface WorkspacePackage {
  /** Relative to the repository root, e.g. `services/catalog`. */
  dir: string;
  manifest: PackageJson;
}

/** The packages pnpm-workspace.yaml selects (`dir/*` and plain directories), those with a package.json. */
export function workspacePackages(): WorkspacePackage[] {
  const { packages } = parse(readRepoFile("pnpm-workspace.yaml")) as { packages: string[] };
  const dirs = packages.flatMap((pattern) => {
    if (!pattern.endsWith("/*")) return [pattern];
    const parent = pattern.slice(0, -2);
    if (!isDirectoryInRepo(parent)) return [];
    return readdirSync(repoPath(parent)).map((child) => `${parent}/${child}`);
  });
  return dirs
    .filter((dir) => existsInRepo(`${dir}/package.json`))
    .sort()
    .map((dir) => ({ dir, manifest: JSON.parse(readRepoFile(`${dir}/package.json`)) as PackageJson }));
}

/** The services: every workspace package under services/, by folder name (`catalog`, `gateway`, …). */
export function serviceNames(): string[] {
  return workspacePackages()
    .filter(({ dir }) => dir.startsWith("services/"))
    .map(({ dir }) => dir.slice("services/".length));
}

/** The workspace packages the services load at run time: the services and their `dependencies`, transitively. */
export function runtimePackages(): WorkspacePackage[] {
  const all = workspacePackages();
  const byName = new Map(all.map((pkg) => [pkg.manifest.name, pkg]));
  const needed = new Set<WorkspacePackage>();
  const visit = (pkg: WorkspacePackage): void => {
    if (needed.has(pkg)) return;
    needed.add(pkg);
    for (const [name, spec] of Object.entries(pkg.manifest.dependencies ?? {})) {
      const dependency = byName.get(name);
      if (spec.startsWith("workspace:") && dependency !== undefined) visit(dependency);
    }
  };
  for (const pkg of all) if (pkg.dir.startsWith("services/")) visit(pkg);
  return [...needed].sort((a, b) => a.dir.localeCompare(b.dir));
}

const COMPILED_MAIN = /^services\/([^/]+)\/dist\/main\.js$/;

/** `services/<name>/dist/main.js` → `{ service, source: "services/<name>/src/main.ts" }`, else undefined. */
export function compiledMain(script: string | undefined): { service: string; source: string } | undefined {
  const match = COMPILED_MAIN.exec(script ?? "");
  if (match === null) return undefined;
  const service = match[1]!;
  return { service, source: `services/${service}/src/main.ts` };
}

/** The value following `flag` in an argument list. */
export function flagValue(args: readonly string[], flag: string): string | undefined {
  const index = args.indexOf(flag);
  return index === -1 ? undefined : args[index + 1];
}

/** The CLI launcher the image runs (`node packages/cli/bin/toolbus.js …`), the provisioning step among others. */
export const PROVISION_LAUNCHER = "packages/cli/bin/toolbus.js";

/** `[launcher, "provision", …flags]` → its flags (`--config <path>`), else undefined. */
export function provisionFlags(args: readonly string[] | undefined): string[] | undefined {
  if (args?.[0] !== PROVISION_LAUNCHER || args[1] !== "provision") return undefined;
  return args.slice(2);
}

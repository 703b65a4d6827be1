/** The Dockerfile and .dockerignore, read as instructions and checked against the workspace they build. */
import { describe, expect, it } from "vitest";
import {
  existsInRepo,
  PROVISION_LAUNCHER,
  readRepoFile,
  runtimePackages,
  workspacePackages,
} from "./repo.js";

interface Instruction {
  keyword: string;
  args: string;
}
interface Stage {
  name: string;
  from: string;
  instructions: Instruction[];
}

/** Stages of a Dockerfile: comments dropped, `\` continuations joined, `FROM x AS y` opening each stage. */
function parseDockerfile(text: string): { args: Map<string, string>; stages: Stage[] } {
  const lines: string[] = [];
  let pending = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line.startsWith("#") || (line === "" && pending === "")) continue;
    if (line.endsWith("\\")) {
      pending += `${line.slice(0, -1).trim()} `;
      continue;
    }
    lines.push(pending + line);
    pending = "";
  }
  const args = new Map<string, string>();
  const stages: Stage[] = [];
  for (const line of lines.filter((l) => l !== "")) {
    const [keyword = "", ...rest] = line.split(/\s+/);
    const instruction = { keyword: keyword.toUpperCase(), args: rest.join(" ") };
    if (instruction.keyword === "FROM") {
      const [from = "", , name = ""] = rest;
      stages.push({ name, from, instructions: [] });
    } else if (stages.length === 0 && instruction.keyword === "ARG") {
      const [key = "", value = ""] = instruction.args.split("=");
      args.set(key, value);
    } else {
      stages.at(-1)?.instructions.push(instruction);
    }
  }
  return { args, stages };
}

const dockerfile = parseDockerfile(readRepoFile("Dockerfile"));

/** The CLI, which the image runs for `toolbus provision`; `toolbus start` loads its runner by name. */
const cli = workspacePackages().find(({ dir }) => dir === "packages/cli")!;
const CLI_RUNNER = "@toolbus/all-in-one";

function stage(name: string): Stage {
  const found = dockerfile.stages.find((s) => s.name === name);
  if (found === undefined) throw new Error(`the Dockerfile has no stage ${name}`);
  return found;
}

function runs(name: string): string[] {
  return stage(name)
    .instructions.filter((i) => i.keyword === "RUN")
    .map((i) => i.args);
}

/** `COPY [--from=x] <sources…> <destination>` of a stage, one entry per source. */
function copies(name: string): { from: string | undefined; source: string; destination: string }[] {
  return stage(name)
    .instructions.filter((i) => i.keyword === "COPY")
    .flatMap(({ args }) => {
      const words = args.split(/\s+/);
      const from = words.find((w) => w.startsWith("--from="))?.slice("--from=".length);
      const paths = words.filter((w) => !w.startsWith("--"));
      const destination = paths.pop() ?? "";
      return paths.map((source) => ({ from, source, destination }));
    });
}

/** The image a stage starts from, through `FROM ${ARG}` and `FROM <stage>`. */
function baseImage(name: string): string {
  const { from } = stage(name);
  const variable = /^\$\{(\w+)\}$/.exec(from)?.[1];
  if (variable !== undefined) return dockerfile.args.get(variable) ?? from;
  return dockerfile.stages.some((s) => s.name === from) ? baseImage(from) : from;
}

function lastInstruction(name: string, keyword: string): string | undefined {
  return stage(name)
    .instructions.filter((i) => i.keyword === keyword)
    .at(-1)?.args;
}

describe("Dockerfile", () => {
  it("builds in stages from node:20-bookworm-slim, ending in a runtime stage without the build tools", () => {
    expect(dockerfile.stages.map((s) => s.name)).toEqual([
      "base",
      "manifests",
      "deps",
      "build",
      "prod-deps",
      "runtime",
    ]);
    expect(dockerfile.stages.map((s) => baseImage(s.name))).toEqual(
      dockerfile.stages.map(() => "node:20-bookworm-slim"),
    );
    // The runtime starts from the bare Node image, as the base does: no pnpm, no devDependencies, no sources.
    expect(stage("runtime").from).toBe(stage("base").from);
  });

  it("installs the pnpm version package.json pins", () => {
    const { packageManager } = JSON.parse(readRepoFile("package.json")) as { packageManager: string };
    expect(runs("base")).toContain(`npm install --global ${packageManager}`);
  });

  it("copies the manifest of every workspace package before installing, so the lockfile matches", () => {
    const manifests = copies("manifests").map(({ source }) => source);
    expect(manifests.filter((source) => source.endsWith("/package.json")).sort()).toEqual(
      workspacePackages()
        .filter(({ dir }) => dir !== ".")
        .map(({ dir }) => `${dir}/package.json`),
    );
    expect(manifests).toEqual(
      expect.arrayContaining(["package.json", "pnpm-lock.yaml", "pnpm-workspace.yaml"]),
    );
  });

  it("copies the dependency patches pnpm-workspace.yaml names before installing (a frozen install needs them)", () => {
    const patches = [...readRepoFile("pnpm-workspace.yaml").matchAll(/:\s*(patches\/\S+\.patch)/g)].map(
      (m) => m[1] as string,
    );
    expect(patches.length).toBeGreaterThan(0);
    const copied = copies("manifests").map(({ source }) => source.replace(/\/$/, ""));
    for (const patch of patches) {
      expect(copied.some((source) => patch === source || patch.startsWith(`${source}/`))).toBe(true);
    }
  });

  it("installs from the frozen lockfile, then builds with pnpm build", () => {
    expect(runs("deps").join("\n")).toMatch(/pnpm install --frozen-lockfile\b/);
    expect(runs("build")).toEqual(["pnpm build"]);
    expect(copies("build")).toEqual([{ from: undefined, source: ".", destination: "." }]);
  });

  it("installs the production dependencies of every service, and the CLI's own for provisioning", () => {
    const install = runs("prod-deps").join("\n");
    expect(install).toMatch(/pnpm install --frozen-lockfile --prod\b/);
    const filters = [...install.matchAll(/--filter (\S+)/g)].map((m) => m[1]!);
    const services = workspacePackages()
      .filter(({ dir }) => dir.startsWith("services/"))
      .map(({ manifest }) => manifest.name);
    expect(filters.sort()).toEqual([...services.map((name) => `${name}...`), cli.manifest.name].sort());
  });

  it("needs no workspace package for the CLI beyond the services' (the runner of toolbus start aside)", () => {
    const loaded = new Set(runtimePackages().map(({ manifest }) => manifest.name));
    const workspaceDependencies = Object.entries(cli.manifest.dependencies ?? {})
      .filter(([, spec]) => spec.startsWith("workspace:"))
      .map(([name]) => name);
    expect(workspaceDependencies.filter((name) => name !== CLI_RUNNER && !loaded.has(name))).toEqual([]);
    // The runner is loaded by name only when installed: the CLI says so rather than fail to start.
    expect(readRepoFile("packages/cli/src/commands/start.ts")).toContain(`"${CLI_RUNNER}"`);
  });

  it("copies the compiled output of every workspace package a service loads, the pages and the memory migrations", () => {
    const fromBuild = copies("runtime").filter(({ from }) => from === "build");
    // Files read at run time beside a package's dist/, copied right after it.
    const besideDist: Record<string, string> = {
      "packages/http-guard": "packages/http-guard/pages",
      "services/memory": "services/memory/migrations",
    };
    expect(fromBuild.map(({ source, destination }) => ({ source, destination }))).toEqual([
      ...runtimePackages().flatMap(({ dir }) => [
        { source: `/app/${dir}/dist`, destination: `${dir}/dist` },
        ...(besideDist[dir] ? [{ source: `/app/${besideDist[dir]}`, destination: besideDist[dir] }] : []),
      ]),
      // The CLI last: its compiled output and the launcher the provisioning step runs.
      { source: `/app/${cli.dir}/dist`, destination: `${cli.dir}/dist` },
      { source: `/app/${cli.dir}/bin`, destination: `${cli.dir}/bin` },
    ]);
    expect(Object.values(besideDist).filter((path) => !existsInRepo(path))).toEqual([]);
    expect(copies("runtime")).toContainEqual({ from: "prod-deps", source: "/app", destination: "./" });
  });

  it("runs the CLI from a launcher that loads the compiled main it copies", () => {
    const { bin } = JSON.parse(readRepoFile(`${cli.dir}/package.json`)) as { bin: Record<string, string> };
    const launcher = `${cli.dir}/${bin.toolbus!.replace(/^\.\//, "")}`;
    expect(launcher).toBe(PROVISION_LAUNCHER);
    expect(readRepoFile(launcher)).toContain('new URL("../dist/main.js", import.meta.url)');
    expect(existsInRepo(`${cli.dir}/src/main.ts`)).toBe(true);
  });

  it("runs as a non-root user it creates, with node as the entrypoint", () => {
    const user = lastInstruction("runtime", "USER");
    const uid = /^(\d+)(?::\d+)?$/.exec(user ?? "")?.[1];
    expect(uid).toBeDefined();
    expect(Number(uid)).toBeGreaterThan(0);
    expect(runs("runtime").join("\n")).toContain(`useradd --system --uid ${uid}`);
    expect(JSON.parse(lastInstruction("runtime", "ENTRYPOINT") ?? "null")).toEqual(["node"]);
    const command = JSON.parse(lastInstruction("runtime", "CMD") ?? "[]") as string[];
    expect(existsInRepo(command[0]!.replace("/dist/", "/src/").replace(/\.js$/, ".ts"))).toBe(true);
  });

  it("checks health with a probe script it copies into the image", () => {
    const healthcheck = lastInstruction("runtime", "HEALTHCHECK") ?? "";
    const command = JSON.parse(healthcheck.slice(healthcheck.indexOf("CMD ") + 4)) as string[];
    expect(command).toEqual(["node", "deploy/probes/nats-connected.mjs"]);
    expect(copies("runtime")).toContainEqual({
      from: undefined,
      source: "deploy/probes",
      destination: "deploy/probes",
    });
    expect(existsInRepo(command[1]!)).toBe(true);
  });
});

// `.dockerignore` patterns as regular expressions: `**/` for any folders, `*` within a name, and a folder matching its contents.
function ignorePatterns(text: string): RegExp[] {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#") && !line.startsWith("!"))
    .map((pattern) => {
      const body = pattern
        .replace(/^\//, "")
        .split("**/")
        .map((part) => part.replace(/[.+?^$(){}|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*"))
        .join("(?:.*/)?");
      return new RegExp(`^${body}(?:/.*)?$`);
    });
}

describe(".dockerignore", () => {
  const patterns = ignorePatterns(readRepoFile(".dockerignore"));
  const ignored = (path: string) => patterns.some((pattern) => pattern.test(path));

  it("keeps installed and built files and the git history out of the build context", () => {
    const paths = [
      "node_modules/x",
      "services/catalog/node_modules/x",
      "services/catalog/dist/main.js",
      "packages/bus/dist-test/x.js",
      ".git/HEAD",
    ];
    expect(paths.filter((path) => !ignored(path))).toEqual([]);
  });

  it("keeps the NATS seeds, secrets files and the gateway tokens out of the build context", () => {
    const secrets = [
      "deploy/nats-auth/gateway.nk",
      "deploy/nats-auth/route-password",
      "deploy/k8s/overlays/prod/nats-auth/catalog.nk",
      "deploy/k8s/overlays/prod/secrets.env",
      ".env",
    ];
    expect(secrets.filter((path) => !ignored(path))).toEqual([]);
  });

  it("keeps everything the build and the image need", () => {
    const needed = [
      "package.json",
      "pnpm-lock.yaml",
      "pnpm-workspace.yaml",
      "tsconfig.json",
      "tsconfig.base.json",
      "services/catalog/src/main.ts",
      "services/catalog/test/tsconfig.json",
      "services/memory/migrations/0001_memory.sql",
      "test/deploy/compose.test.ts",
      "deploy/probes/nats-connected.mjs",
      "deploy/probes/nats-connected.d.mts",
    ];
    expect(needed.filter(ignored)).toEqual([]);
  });
});

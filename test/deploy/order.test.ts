/**
 * The order deploy/README.md gives ("What runs in which order"), run for real: `toolbus
 * nats-config --config`, nats-server with that auth.conf, a service that refuses to start before
 * provisioning, `toolbus provision` as the provisioner, then
 * the catalog topology of the prod overlay: a catalog serving `catalog.*` with its own seed and its
 * server's connector seed, and a `--connectors-only` catalog holding nothing but its server's
 * connector seed. The second server is added as the README's "A new server" says: nats-config
 * again, a restart of nats-server, the new seed to the catalog that runs it. Processes run from source.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { eventually, freePort, natsServerBinaries, toolbusToml } from "@toolbus/testkit";
import { serverEverythingCommand } from "@toolbus/testkit/mcp-test-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { natsConf } from "./nats-conf.js";
import { readRepoFile, repoPath, repoRoot } from "./repo.js";

const TSX = pathToFileURL(createRequire(join(repoRoot, "package.json")).resolve("tsx")).href;
const CLI = repoPath("packages/cli/src/main.ts");
const CATALOG = repoPath("services/catalog/src/main.ts");
/** How long a process of this test may take to start, answer or exit on a loaded machine. */
const PROCESS_TIMEOUT_MS = 60_000;

/** Every variable of the test runner that would choose a bus or an identity for the child. */
const CLEARED = [
  "NATS_URL",
  "NATS_NKEY_FILE",
  "NATS_NKEY_DIR",
  "NATS_USER",
  "NATS_PASSWORD",
  "TOOLBUS_CONFIG",
];

let dir: string;
let nats: ChildProcess;
let natsUrl: string;
let natsAddress: { port: number; monitor: number };
const running: ChildProcess[] = [];

/** A process of the checkout, from source, with only the bus and identity `env` gives it. */
function start(entry: string, args: string[], env: Record<string, string>) {
  const base = { ...process.env };
  for (const name of CLEARED) delete base[name];
  const child = spawn(process.execPath, ["--conditions=@toolbus/source", "--import", TSX, entry, ...args], {
    cwd: dir,
    env: { ...base, TOOLBUS_PREFIX: "toolbus", LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

/** Runs a command to its end: its exit code and what it printed. */
async function run(entry: string, args: string[], env: Record<string, string>) {
  const started = start(entry, args, env);
  const timer = setTimeout(() => started.child.kill("SIGKILL"), PROCESS_TIMEOUT_MS);
  const code = await started.exited;
  clearTimeout(timer);
  return { code, stdout: started.stdout(), stderr: started.stderr() };
}

const toolbus = (args: string[], env: Record<string, string> = {}) => run(CLI, args, env);
const seed = (name: string) => join(dir, "nats-auth", `${name}.nk`);
const configPath = (name: string) => join(dir, `${name}.toml`);

/** A folder holding copies of exactly these seeds, as a pod's Secret volume or compose's secrets would. */
function seedFolder(name: string, seeds: string[]): string {
  const folder = join(dir, name);
  mkdirSync(folder, { mode: 0o700 });
  for (const each of seeds) copyFileSync(seed(each), join(folder, `${each}.nk`));
  return folder;
}

/** The servers the catalog lists, as the CLI with its own identity shows them; undefined until it answers. */
async function listedServers(): Promise<Record<string, string> | undefined> {
  const result = await toolbus(["servers", "--json"], { NATS_URL: natsUrl, NATS_NKEY_FILE: seed("cli") });
  if (result.code !== 0) return undefined;
  const servers = JSON.parse(result.stdout) as { name: string; status: string }[];
  return Object.fromEntries(servers.map((server) => [server.name, server.status]));
}

/**
 * Polls until the catalog lists `expected`; the last listing when it never does, or once `serving`,
 * the catalog that should make it so, has exited.
 */
async function untilListed(
  expected: Record<string, string>,
  serving: ChildProcess,
): Promise<Record<string, string> | undefined> {
  const deadline = Date.now() + PROCESS_TIMEOUT_MS;
  let last: Record<string, string> | undefined;
  while (Date.now() < deadline && serving.exitCode === null) {
    last = await listedServers();
    if (JSON.stringify(last) === JSON.stringify(expected)) return last;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return last;
}

const everything = serverEverythingCommand();

/** nats-server on the config `dir/nats.conf`, on this test's ports, until it answers on them. */
async function startNats(): Promise<void> {
  // The nats:2.10 of docker-compose.yml where this machine has it.
  const binary =
    natsServerBinaries().find(({ version }) => version.startsWith("2.10."))?.path ?? "nats-server";
  const { port, monitor } = natsAddress;
  nats = spawn(
    binary,
    ["-c", join(dir, "nats.conf"), "-a", "127.0.0.1", "-p", `${port}`, "-m", `${monitor}`],
    {
      stdio: "ignore",
    },
  );
  await eventually(
    "nats-server to answer on its monitoring port",
    async () => {
      const answer = await fetch(`http://127.0.0.1:${monitor}/healthz?js-enabled-only=true`);
      return answer.ok ? true : undefined;
    },
    PROCESS_TIMEOUT_MS,
  );
}

async function stopNats(): Promise<void> {
  if (nats?.exitCode !== null || nats.signalCode !== null) return;
  const gone = new Promise((resolve) => nats.once("exit", resolve));
  nats.kill("SIGTERM");
  await gone;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "toolbus-deploy-order-"));
  // The config before the second server is added, and after.
  writeFileSync(configPath("alpha"), toolbusToml({ servers: { alpha: everything } }));
  writeFileSync(configPath("alpha-beta"), toolbusToml({ servers: { alpha: everything, beta: everything } }));
  // 1. The identities of the config's servers, and auth.conf.
  const written = await toolbus([
    "nats-config",
    "--out",
    join(dir, "nats-auth"),
    "--config",
    configPath("alpha"),
  ]);
  expect(written.code, written.stderr).toBe(0);
  // 2. nats-server on the committed deploy/nats/nats.conf, auth.conf beside it, as compose runs it;
  // its addresses (flags) and store moved to this test's own, as nats.test.ts does.
  copyFileSync(join(dir, "nats-auth", "auth.conf"), join(dir, "auth.conf"));
  const storeDir = natsConf("deploy/nats/nats.conf").storeDir!;
  writeFileSync(
    join(dir, "nats.conf"),
    readRepoFile("deploy/nats/nats.conf").replace(`store_dir: ${storeDir}`, `store_dir: ${join(dir, "js")}`),
  );
  const [port, monitor] = [await freePort(), await freePort()];
  natsUrl = `nats://127.0.0.1:${port}`;
  natsAddress = { port, monitor };
  await startNats();
}, 120_000);

afterAll(async () => {
  await Promise.all(
    running
      .filter((child) => child.exitCode === null && child.signalCode === null)
      .map((child) => {
        const gone = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        return gone;
      }),
  );
  await stopNats();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 120_000);

describe("deploying in the order deploy/README.md gives", () => {
  it("a service started before provisioning exits 1, naming what is missing and the command that makes it", async () => {
    const catalog = await run(CATALOG, ["--config", configPath("alpha")], {
      NATS_URL: natsUrl,
      NATS_NKEY_FILE: seed("catalog"),
    });
    expect(catalog.code).toBe(1);
    const lines = catalog.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^catalog: the JetStream assets are not as the contract gives them: .*does not exist/,
    );
    expect(lines[0]).toContain("Run `toolbus provision`");
  }, 120_000);

  it("toolbus provision, as the provisioner, creates every asset, and a second run changes nothing", async () => {
    const env = { NATS_URL: natsUrl, NATS_NKEY_FILE: seed("provisioner") };
    const first = await toolbus(["provision", "--config", configPath("alpha")], env);
    expect(first.code, first.stderr).toBe(0);
    // One line per asset: what happened to it, and its name.
    const report = (stdout: string) =>
      stdout
        .trim()
        .split("\n")
        .map((line) => line.split(/\s+/));
    const created = report(first.stdout);
    expect(created.length).toBeGreaterThan(0);
    expect(created.filter(([what]) => what !== "created")).toEqual([]);
    const second = await toolbus(["provision", "--config", configPath("alpha")], env);
    expect(second.code, second.stderr).toBe(0);
    expect(report(second.stdout)).toEqual(created.map(([, name]) => ["unchanged", name]));
  }, 120_000);

  it("a catalog serving catalog.* runs its server with its own seed and that server's connector seed", async () => {
    const own = seedFolder("front", ["catalog", "connector-alpha"]);
    const front = start(CATALOG, ["--config", configPath("alpha"), "--servers", "alpha"], {
      NATS_URL: natsUrl,
      NATS_NKEY_FILE: join(own, "catalog.nk"),
      NATS_NKEY_DIR: own,
    });
    expect(await untilListed({ alpha: "ready" }, front.child), front.stderr()).toEqual({ alpha: "ready" });
  }, 120_000);

  it("a new server: nats-config keeps every seed, and after a restart of nats-server a connectors-only catalog holding only the new server's seed runs it", async () => {
    const before = ["provisioner", "catalog", "connector-alpha", "cli"].map((name) =>
      readFileSync(seed(name), "utf8"),
    );
    const written = await toolbus([
      "nats-config",
      "--out",
      join(dir, "nats-auth"),
      "--config",
      configPath("alpha-beta"),
    ]);
    expect(written.code, written.stderr).toBe(0);
    expect(
      ["provisioner", "catalog", "connector-alpha", "cli"].map((name) => readFileSync(seed(name), "utf8")),
    ).toEqual(before);
    // Restarted (a reload does not give a new account its JetStream imports: deploy/README.md, "A new
    // server"), nats-server knows the new connector; the running catalog reconnects with its own seed.
    copyFileSync(join(dir, "nats-auth", "auth.conf"), join(dir, "auth.conf"));
    await stopNats();
    await startNats();
    // No catalog identity at all: NATS_NKEY_FILE unset, a folder with the beta connector's seed alone.
    const beta = seedFolder("connectors-only", ["connector-beta"]);
    const connectors = start(
      CATALOG,
      ["--config", configPath("alpha-beta"), "--servers", "beta", "--connectors-only"],
      {
        NATS_URL: natsUrl,
        NATS_NKEY_DIR: beta,
      },
    );
    // The catalog.* of the first catalog lists the server the second one runs.
    expect(
      await untilListed({ alpha: "ready", beta: "ready" }, connectors.child),
      connectors.stderr(),
    ).toEqual({
      alpha: "ready",
      beta: "ready",
    });
    expect(connectors.child.exitCode).toBeNull();
  }, 180_000);
});

/**
 * NATS for the all-in-one process. Given `NATS_URL`, the server there (with the identities of
 * `NATS_IDENTITIES_DIR` when set, else without credentials). Without it, a `nats-server` of its
 * own on a free loopback port, started with identities generated for the run, so no client
 * without credentials can reach the bus — never the unauthenticated server that may answer on
 * 4222. Those seeds live in this process's memory only, handed to the services in-process; the
 * server's config needs only their public keys. The one seed on disk is the CLI's, with the
 * server's URL, in the project's private state directory (never the checkout), where the
 * `toolbus` CLI run in the same folder finds them.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { delimiter, join } from "node:path";
import {
  ensurePrivateDir,
  type GeneratedNatsIdentities,
  generateNatsIdentities,
  legacyLocalNatsFiles,
  localNatsPaths,
  maskUrl,
  type NatsAccess,
  natsServers,
  readSeedFile,
  seedFileOf,
  writePrivateFile,
} from "@toolbus/bus";
import { acceptsConnections, freePort } from "@toolbus/config";
import { type Identity, identityName, inboxPrefix, LOCAL_JS_API } from "@toolbus/protocol";
import { SetupError } from "./setup-error.js";

export interface LocalNats {
  url: string;
  /** True when this process started the server (and will stop it). */
  started: boolean;
  /** `NATS_IDENTITIES_DIR`, the directory of each identity's NKey seed, when NATS_URL was given with it. */
  identitiesDir: string | undefined;
  /** Where the CLI's seed was written, when this process started the server. */
  cliSeedFile?: string;
  /** How one identity connects: its own seed and inbox prefix when the bus has identities. */
  accessFor(identity: Identity): NatsAccess;
  /**
   * Makes `accessFor` answer for these servers' connectors too (to remove what the bus keeps of
   * servers no longer configured). Only before any service connected: a server started here
   * starts again. A given NATS has what it has.
   */
  withServers(servers: readonly string[]): Promise<void>;
  stop(): Promise<void>;
}

export async function ensureNats(options: {
  url?: string;
  /** `NATS_IDENTITIES_DIR`: seeds written by `toolbus nats-config`, for a given `url`. */
  identitiesDir?: string;
  prefix: string;
  /** The configured MCP servers: each gets a connector identity of its own. */
  servers: readonly string[];
  /** The project's `.toolbus/nats`: the JetStream store. */
  dataDir: string;
  /** The project's private state directory (see @toolbus/bus local-state.ts). */
  stateDir: string;
  env: NodeJS.ProcessEnv;
}): Promise<LocalNats> {
  if (options.url !== undefined) {
    const servers = natsServers(options.url);
    const reachable = await Promise.all(servers.map(answers));
    if (!reachable.some(Boolean)) {
      throw new SetupError(
        `NATS is not reachable at ${servers.map(maskUrl).join(",")}. Start it (nats-server -js) or fix NATS_URL.`,
      );
    }
    return given(servers, options.identitiesDir, options.prefix);
  }
  const binary = findOnPath("nats-server", options.env);
  if (!binary) {
    throw new SetupError(
      "nats-server is not installed, and pnpm start runs its own (with credentials) when NATS_URL is not set. Install it " +
        "(`bash scripts/setup.sh` in the toolbus checkout does; or Debian/Ubuntu: apt-get install nats-server; macOS: brew install nats-server; or see https://nats.io/download), " +
        "or point NATS_URL at a running server with JetStream.",
    );
  }
  const paths = localNatsPaths(options.stateDir, options.dataDir);
  ensurePrivateDir(paths.dir);
  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  // The store is the bus's data (events carry tool arguments and results): the owner's alone.
  chmodSync(options.dataDir, 0o700);
  // Before the seeds left the checkout, every identity's was written under it.
  for (const legacy of legacyLocalNatsFiles(options.dataDir))
    rmSync(legacy, { recursive: true, force: true });
  const pidFile = join(paths.dir, "nats.pid");
  // One nats-server per JetStream store: a toolbus that ended without stopping its own (killed,
  // or a terminal closed) left it running on this store.
  await stopLeftover(pidFile, paths.conf);

  let servers = [...options.servers];
  let running = await startServer(binary, paths, options.prefix, servers);
  writePrivateFile(pidFile, `${JSON.stringify({ nats: running.child.pid, owner: process.pid })}\n`);
  // An exit that skips the clean stop (a second Ctrl-C) still ends this server: the store is
  // toolbus's, and a server left on it is one the next start has to find and stop.
  const stopOnExit = () => {
    const { child } = running;
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
  };
  process.once("exit", stopOnExit);
  const stopRunning = async () => {
    process.off("exit", stopOnExit);
    const { child } = running;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  };
  const local: LocalNats = {
    get url() {
      return running.url;
    },
    started: true,
    identitiesDir: undefined,
    cliSeedFile: paths.cliSeed,
    accessFor(identity) {
      const seed = running.identities.seeds.get(identityName(identity));
      if (seed === undefined) throw new Error(`no NATS identity was generated for ${identityName(identity)}`);
      return {
        servers: [running.url],
        nkeySeed: seed,
        inboxPrefix: inboxPrefix(options.prefix, identity),
        identity: identityName(identity),
        credentialSource: "an identity generated for this run",
        // As given(): each identity's account reaches JetStream through its imports.
        ...(identity.role === "provisioner" ? {} : { jsApiPrefix: LOCAL_JS_API }),
      };
    },
    async withServers(more) {
      const added = more.filter((name) => !servers.includes(name));
      if (added.length === 0) return;
      // The server's identities are fixed when it starts: it starts again, on the same store,
      // with theirs too (before any service connected).
      servers = [...servers, ...added];
      await stopRunning();
      running = await startServer(binary, paths, options.prefix, servers);
      writePrivateFile(pidFile, `${JSON.stringify({ nats: running.child.pid, owner: process.pid })}\n`);
    },
    async stop() {
      // The CLI's seed is good for this server only: it goes with it.
      rmSync(paths.url, { force: true });
      rmSync(paths.cliSeed, { force: true });
      await stopRunning();
      rmSync(pidFile, { force: true });
    },
  };
  return local;
}

interface RunningServer {
  child: ChildProcess;
  url: string;
  identities: GeneratedNatsIdentities;
}

/** A nats-server on a free loopback port with identities generated for `servers`, once it answers. */
async function startServer(
  binary: string,
  paths: ReturnType<typeof localNatsPaths>,
  prefix: string,
  servers: readonly string[],
): Promise<RunningServer> {
  const identities = generateNatsIdentities({ prefix, servers });
  const port = await freePort();
  writePrivateFile(
    paths.conf,
    [
      "# Written by pnpm start / toolbus start: a NATS of its own, loopback only, every client authenticated.",
      "# The seeds of these keys exist only in that process's memory (the CLI's: cli.nk beside this file).",
      `listen: "127.0.0.1:${port}"`,
      `jetstream { store_dir: ${JSON.stringify(paths.store)} }`,
      identities.authConf,
      "",
    ].join("\n"),
  );
  const cliSeed = identities.seeds.get("cli");
  if (cliSeed !== undefined) writePrivateFile(paths.cliSeed, `${cliSeed}\n`);
  // Its own process group: a terminal's Ctrl-C reaches toolbus, which stops the services while
  // NATS still runs and this server last, instead of every part losing NATS at once. An empty
  // environment: it needs none, and toolbus's may hold secrets.
  const child = spawn(binary, ["-c", paths.conf], {
    stdio: ["ignore", "ignore", "pipe"],
    detached: true,
    env: {},
  });
  const url = `nats://127.0.0.1:${port}`;
  await waitUntilAnswering(url, child);
  writePrivateFile(paths.url, `${url}\n`);
  return { child, url, identities };
}

/**
 * Stops the nats-server named by `pidFile` when its toolbus is gone: it still holds the store.
 * One whose toolbus still runs is that toolbus's: start-up stops, naming it.
 */
async function stopLeftover(pidFile: string, conf: string): Promise<void> {
  const recorded = readPidFile(pidFile);
  if (recorded === undefined) return;
  if (recorded.owner !== process.pid && isAlive(recorded.owner) && isAlive(recorded.nats)) {
    throw new SetupError(
      `another toolbus (pid ${recorded.owner}) runs in this folder, with its nats-server (pid ${recorded.nats}) on .toolbus/nats: stop it first (Ctrl-C where it runs, or kill ${recorded.owner}).`,
    );
  }
  // A pid the system gave to another program since is left alone.
  if (isAlive(recorded.nats) && commandOf(recorded.nats).includes(conf)) {
    process.kill(recorded.nats, "SIGTERM");
    const deadline = Date.now() + 10_000;
    while (isAlive(recorded.nats)) {
      if (Date.now() > deadline) {
        process.kill(recorded.nats, "SIGKILL");
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  rmSync(pidFile, { force: true });
}

function readPidFile(file: string): { nats: number; owner: number } | undefined {
  try {
    const value = JSON.parse(readFileSync(file, "utf8")) as { nats?: unknown; owner?: unknown };
    if (Number.isInteger(value.nats) && Number.isInteger(value.owner))
      return { nats: value.nats as number, owner: value.owner as number };
  } catch {
    // Missing, or not ours: nothing to stop.
  }
  return undefined;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, but another user's.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The command line of a process (Linux and macOS `ps`), or "" when it cannot be read. */
function commandOf(pid: number): string {
  try {
    return execFileSync("ps", ["-p", String(pid), "-o", "args="], { encoding: "utf8" });
  } catch {
    return "";
  }
}

function given(servers: string[], identitiesDir: string | undefined, prefix: string): LocalNats {
  return {
    url: servers.join(","),
    started: false,
    identitiesDir,
    accessFor(identity) {
      if (identitiesDir === undefined) return { servers };
      const file = seedFileOf(identitiesDir, identity);
      return {
        servers,
        nkeySeed: readSeedFile(file, `${identityName(identity)}'s NATS identity ${file}`),
        inboxPrefix: inboxPrefix(prefix, identity),
        identity: identityName(identity),
        credentialSource: `NATS_NKEY_FILE=${file}`,
        // Each identity's account reaches JetStream through its imports; the provisioner's holds it.
        ...(identity.role === "provisioner" ? {} : { jsApiPrefix: LOCAL_JS_API }),
      };
    },
    withServers: async () => {},
    stop: async () => {},
  };
}

function findOnPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  const dirs = [...(env.PATH ?? "").split(delimiter), "/usr/sbin", "/usr/local/sbin"];
  return dirs.map((dir) => join(dir, name)).find((candidate) => existsSync(candidate));
}

async function waitUntilAnswering(url: string, child: ChildProcess): Promise<void> {
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-2000);
  });
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new SetupError(`nats-server exited (code ${child.exitCode}): ${stderr.trim()}`);
    if (await answers(url)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill("SIGKILL");
  throw new SetupError(`nats-server did not answer at ${maskUrl(url)} within 10 s: ${stderr.trim()}`);
}

/** True when something accepts TCP connections at a NATS URL (`host:port` alone too; port 4222 when none). */
function answers(url: string): Promise<boolean> {
  const { hostname, port } = new URL(/^[a-z]+:\/\//i.test(url) ? url : `nats://${url}`);
  return acceptsConnections(hostname, Number(port || 4222));
}

/**
 * NATS for the all-in-one process. Given `NATS_URL`, the server there (with the identities of
 * `NATS_IDENTITIES_DIR` when set, else without credentials). Without it, a `nats-server` of its
 * own on a free loopback port, started with generated identities (state under `.toolbus/nats/`),
 * so no client without credentials can reach the bus — never the unauthenticated server that may
 * answer on 4222. The URL of a running one is kept in `.toolbus/nats/url` for the CLI.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import {
  localNatsPaths,
  maskUrl,
  type NatsAccess,
  natsServers,
  readSeedFile,
  seedFileOf,
  writeNatsIdentities,
} from "@toolbus/bus";
import { acceptsConnections, freePort } from "@toolbus/config";
import { type Identity, identityName, inboxPrefix, LOCAL_JS_API } from "@toolbus/protocol";
import { SetupError } from "./setup-error.js";

export interface LocalNats {
  url: string;
  /** True when this process started the server (and will stop it). */
  started: boolean;
  /** The directory of each role's NKey seed, or undefined when the bus has no credentials. */
  identitiesDir: string | undefined;
  /** How one identity connects: its own seed and inbox prefix when the bus has identities. */
  accessFor(identity: Identity): NatsAccess;
  stop(): Promise<void>;
}

export async function ensureNats(options: {
  url?: string;
  /** `NATS_IDENTITIES_DIR`: seeds written by `toolbus nats-config`, for a given `url`. */
  identitiesDir?: string;
  prefix: string;
  /** The configured MCP servers: each gets a connector identity of its own. */
  servers: readonly string[];
  dataDir: string;
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
  const paths = localNatsPaths(options.dataDir);
  mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  writeNatsIdentities({ dir: paths.identities, prefix: options.prefix, servers: options.servers });
  const port = await freePort();
  // nats-server resolves `include` against the config file's own folder.
  writeFileSync(
    paths.conf,
    [
      "# Written by pnpm start / toolbus start: a NATS of its own, loopback only, every client authenticated.",
      `listen: "127.0.0.1:${port}"`,
      `jetstream { store_dir: ${JSON.stringify(paths.store)} }`,
      'include "identities/auth.conf"',
      "",
    ].join("\n"),
    { mode: 0o600 },
  );
  // Its own process group: a terminal's Ctrl-C reaches toolbus, which stops the services while
  // NATS still runs and this server last, instead of every part losing NATS at once.
  const child = spawn(binary, ["-c", paths.conf], { stdio: ["ignore", "ignore", "pipe"], detached: true });
  const url = `nats://127.0.0.1:${port}`;
  await waitUntilAnswering(url, child);
  writeFileSync(paths.url, `${url}\n`);
  return {
    ...given([url], paths.identities, options.prefix),
    started: true,
    async stop() {
      rmSync(paths.url, { force: true });
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
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
        credentialSource: `NATS_NKEY_FILE=${file}`,
        // Each identity's account reaches JetStream through its imports; the provisioner's holds it.
        ...(identity.role === "provisioner" ? {} : { jsApiPrefix: LOCAL_JS_API }),
      };
    },
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

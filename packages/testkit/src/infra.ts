/**
 * Finds or starts the real NATS (with JetStream) and Postgres every integration test needs.
 * Order: NATS_URL / DATABASE_URL when set; the local defaults when they work (NATS answers a
 * JetStream account request, Postgres accepts a login); testcontainers when a Docker engine
 * answers; else a spawned `nats-server -js` and a throwaway Postgres cluster.
 */
import { type ChildProcess, execFileSync, type StdioOptions, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect as natsConnect } from "@nats-io/transport-node";
import { acceptsConnections, freePort } from "@toolbus/config";
import pg from "pg";

export interface Infra {
  natsUrl: string;
  databaseUrl: string;
  stop(): Promise<void>;
}

const LOCAL_NATS = "nats://127.0.0.1:4222";
const LOCAL_DATABASE = "postgres://postgres@127.0.0.1:5432/test";

export async function startInfra(env: NodeJS.ProcessEnv = process.env): Promise<Infra> {
  const stops: Array<() => Promise<void>> = [];
  const [localNats, localDatabase] = await Promise.all([
    env.NATS_URL ? false : hasJetStream(LOCAL_NATS),
    env.DATABASE_URL ? false : acceptsLogin(LOCAL_DATABASE),
  ]);
  const natsUrl = env.NATS_URL ?? (localNats ? LOCAL_NATS : undefined);
  const databaseUrl = env.DATABASE_URL ?? (localDatabase ? LOCAL_DATABASE : undefined);
  const started = { natsUrl, databaseUrl };
  if (!started.natsUrl || !started.databaseUrl) {
    const containers = await startContainers(!started.natsUrl, !started.databaseUrl);
    if (containers) {
      started.natsUrl ??= containers.natsUrl;
      started.databaseUrl ??= containers.databaseUrl;
      stops.push(containers.stop);
    }
  }
  if (!started.natsUrl) {
    const nats = await spawnNats();
    started.natsUrl = nats.url;
    stops.push(nats.stop);
  }
  if (!started.databaseUrl) {
    const pg = await spawnPostgres();
    started.databaseUrl = pg.url;
    stops.push(pg.stop);
  }
  return {
    natsUrl: started.natsUrl,
    databaseUrl: started.databaseUrl,
    async stop() {
      for (const stop of stops.reverse()) await stop();
    },
  };
}

/** True when something accepts TCP connections at the URL's host and port within 500 ms. */
function answers(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return acceptsConnections(hostname, Number(port));
}

/** True when a NATS server answers at the URL and has JetStream enabled for this account. */
async function hasJetStream(url: string): Promise<boolean> {
  if (!(await answers(url))) return false;
  try {
    const nc = await natsConnect({ servers: url, timeout: 1_000, reconnect: false });
    try {
      await (await jetstreamManager(nc, { timeout: 1_000 })).getAccountInfo();
      return true;
    } finally {
      await nc.close();
    }
  } catch {
    return false;
  }
}

/** True when Postgres at the URL accepts the login and answers a query. */
async function acceptsLogin(url: string): Promise<boolean> {
  if (!(await answers(url))) return false;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function startContainers(
  needNats: boolean,
  needPostgres: boolean,
): Promise<{ natsUrl?: string; databaseUrl?: string; stop(): Promise<void> } | undefined> {
  try {
    // Imported lazily: testcontainers is heavy and only used where a Docker engine answers.
    const tc = await import("testcontainers");
    await tc.getContainerRuntimeClient();
    const stops: Array<() => Promise<unknown>> = [];
    let natsUrl: string | undefined;
    let databaseUrl: string | undefined;
    if (needNats) {
      const nats = await new tc.GenericContainer("nats:2.10-alpine")
        .withCommand(["-js"])
        .withExposedPorts(4222)
        .start();
      natsUrl = `nats://${nats.getHost()}:${nats.getMappedPort(4222)}`;
      stops.push(() => nats.stop());
    }
    if (needPostgres) {
      const { PostgreSqlContainer } = await import("@testcontainers/postgresql");
      const pg = await new PostgreSqlContainer("postgres:15-alpine").start();
      databaseUrl = pg.getConnectionUri();
      stops.push(() => pg.stop());
    }
    return {
      ...(natsUrl ? { natsUrl } : {}),
      ...(databaseUrl ? { databaseUrl } : {}),
      async stop() {
        for (const stop of stops) await stop();
      },
    };
  } catch {
    return undefined;
  }
}

async function waitFor(url: string, what: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`${what} exited with code ${child.exitCode} before it answered`);
    if (await answers(url)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what} did not answer at ${url} within 15 s`);
}

function findBinary(name: string, candidates: string[]): string {
  for (const candidate of candidates) if (existsSync(candidate)) return candidate;
  throw new Error(
    `${name} not found (looked in ${candidates.join(", ")}). Install it (Debian: apt-get install ${name}) or set ${
      name === "nats-server" ? "NATS_URL" : "DATABASE_URL"
    }.`,
  );
}

async function spawnNats(): Promise<{ url: string; stop(): Promise<void> }> {
  const binary = findBinary("nats-server", [
    "/usr/sbin/nats-server",
    "/usr/bin/nats-server",
    "/usr/local/bin/nats-server",
    "/opt/homebrew/bin/nats-server",
  ]);
  const dir = mkdtempSync(join(tmpdir(), "toolbus-nats-"));
  const port = await freePort();
  const child = spawn(binary, ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", dir], {
    stdio: "ignore",
  });
  const url = `nats://127.0.0.1:${port}`;
  await waitFor(url, "nats-server", child);
  return {
    url,
    async stop() {
      child.kill("SIGTERM");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A nats-server of a test's own, for tests that take the bus away and bring it back. */
export interface ThrowawayNats {
  /** `nats://127.0.0.1:<port>`. */
  url: string;
  /** Stops the server (SIGTERM, waits for the exit); its JetStream store stays. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same JetStream store. */
  start(): Promise<void>;
  /** Stops it if running and deletes its store. */
  destroy(): Promise<void>;
}

export interface ThrowawayNatsOptions {
  /** The server's max_payload in bytes (default NATS's 1 MiB): small values make large-payload tests cheap. */
  maxPayload?: number;
}

/** `nats-server -js` on a free loopback port with a fresh store directory. */
export async function startThrowawayNats(options: ThrowawayNatsOptions = {}): Promise<ThrowawayNats> {
  const binary = findBinary("nats-server", [
    "/usr/sbin/nats-server",
    "/usr/bin/nats-server",
    "/usr/local/bin/nats-server",
    "/opt/homebrew/bin/nats-server",
  ]);
  const dir = mkdtempSync(join(tmpdir(), "toolbus-nats-"));
  const port = await freePort();
  const url = `nats://127.0.0.1:${port}`;
  const args = ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", dir];
  if (options.maxPayload !== undefined) {
    // max_payload is a config-file setting only.
    const conf = join(dir, "nats.conf");
    writeFileSync(conf, `max_payload: ${options.maxPayload}\n`);
    args.push("-c", conf);
  }
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(binary, args, { stdio: "ignore" });
    await waitFor(url, "nats-server", child);
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once("exit", resolve));
    running.kill("SIGTERM");
    await exited;
  };
  await start();
  return {
    url,
    start,
    stop,
    async destroy() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function spawnPostgres(): Promise<{ url: string; stop(): Promise<void> }> {
  const cluster = await startThrowawayPostgres();
  return { url: cluster.url, stop: () => cluster.destroy() };
}

/** A Postgres cluster of a test's own, for tests that take the database away and bring it back. */
export interface ThrowawayPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/test` (trust auth). */
  url: string;
  /** Stops the server (fast shutdown: open connections are cut); the data directory stays. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same data. */
  start(): Promise<void>;
  /** Stops it if running and deletes its data directory. Synchronous inside, so it may run in an exit handler. */
  destroy(): Promise<void>;
}

// Output is dropped, but stderr is kept so a failure's error says why.
const QUIET: StdioOptions = ["ignore", "ignore", "pipe"];

/** initdb + start of a fresh cluster on a free port with an empty database `test` (about 1 s). */
export async function startThrowawayPostgres(): Promise<ThrowawayPostgres> {
  const versions = existsSync("/usr/lib/postgresql") ? readdirSync("/usr/lib/postgresql").sort() : [];
  const bin = join("/usr/lib/postgresql", versions.at(-1) ?? "15", "bin");
  findBinary("postgresql", [join(bin, "postgres")]);
  const dir = mkdtempSync(join(tmpdir(), "toolbus-pg-"));
  const data = join(dir, "data");
  const port = await freePort();
  // initdb and postgres refuse to run as root; run them as the postgres user then.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) execFileSync("chown", ["postgres", dir]);
  const run = (cmd: string, args: string[]) =>
    asRoot
      ? execFileSync("runuser", ["-u", "postgres", "--", cmd, ...args], { stdio: QUIET })
      : execFileSync(cmd, args, { stdio: QUIET });
  run(join(bin, "initdb"), ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
  let running = false;
  const start = async () => {
    run(join(bin, "pg_ctl"), ["-D", data, "-l", join(dir, "log"), "-w", "-o", options, "start"]);
    running = true;
  };
  const stop = async () => {
    run(join(bin, "pg_ctl"), ["-D", data, "-m", "fast", "-w", "stop"]);
    running = false;
  };
  await start();
  run(join(bin, "createdb"), ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "test"]);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/test`,
    stop,
    start,
    async destroy() {
      try {
        if (running) run(join(bin, "pg_ctl"), ["-D", data, "-m", "immediate", "stop"]);
      } catch {
        // Already gone (a signal to the process group reached the server too): the folder still goes.
      }
      running = false;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

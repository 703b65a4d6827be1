/**
 * NATS identities: the NKey each toolbus role connects with, the files they live in, and the
 * environment a process reads its own from. `writeNatsIdentities` is what `toolbus nats-config`
 * and `pnpm start` run; `natsAccessFromEnv` is what every service runs at start-up.
 *
 * Environment of a process (all optional; without credentials the bus is unauthenticated):
 * - `NATS_URL`: one URL or a comma-separated list (a cluster); `user:password@` is allowed.
 * - `NATS_NKEY_FILE`: the file holding this identity's NKey seed (`SU…`), from `toolbus nats-config`.
 *   A catalog process finds the seed of each server's connector beside it (`connector-<server>.nk`),
 *   or in `NATS_NKEY_DIR`.
 * - `NATS_JS_API_PREFIX`: where the account reaches JetStream's API (default: `LOCAL_JS_API` with
 *   an NKey of `toolbus nats-config`, whose accounts import it there; `$JS.API` otherwise).
 * - `NATS_USER` / `NATS_PASSWORD` (or `NATS_PASSWORD_FILE`, a file holding it): user and
 *   password instead of an NKey.
 * - `NATS_TLS_CA_FILE`, `NATS_TLS_CERT_FILE`, `NATS_TLS_KEY_FILE`: TLS to NATS (a `tls://` URL
 *   or a CA file turns TLS on; cert and key are for servers that verify clients).
 * - `TOOLBUS_JS_REPLICAS`: how many JetStream nodes keep each stream and KV bucket the provisioner
 *   creates (default 1, for a single nats-server; 3 on a 3-node cluster).
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { nkeys, PermissionViolationError } from "@nats-io/nats-core";
import { secretFromEnv } from "@toolbus/config";
import {
  busLayout,
  createSubjects,
  type Identity,
  identityName,
  identityOf,
  inboxPrefix,
  LOCAL_JS_API,
  type Role,
} from "@toolbus/protocol";
import { ConfigError } from "./config.js";
import { maskUrl } from "./core/mask-url.js";
import { renderAuthConf } from "./core/nats-auth-conf.js";
import { writePrivateFile } from "./local-state.js";
import type { Logger } from "./logger.js";

export interface NatsTlsFiles {
  caFile?: string;
  certFile?: string;
  keyFile?: string;
}

/** How one process reaches NATS and who it is there. */
export interface NatsAccess {
  /** Server URLs: one, or every node of a cluster. */
  servers: string[];
  /** The NKey seed text (`SU…`), when the identity is an NKey user. */
  nkeySeed?: string;
  user?: string;
  password?: string;
  tls?: NatsTlsFiles;
  /** This identity's reply-subject prefix (see `inboxPrefix` in the protocol). */
  inboxPrefix?: string;
  /** Where the credentials came from, for messages (`NATS_NKEY_FILE=/run/secrets/…`); never the secret. */
  credentialSource?: string;
  /** The identity's name (`dispatcher`, `connector-github`): what its account may read large replies under. */
  identity?: string;
  /** Replicas of every stream and KV bucket the provisioner creates (`TOOLBUS_JS_REPLICAS`); default 1. */
  jetStreamReplicas?: number;
  /**
   * Where this identity's account reaches JetStream's API: `LOCAL_JS_API` for an identity of
   * `toolbus nats-config` (its own account imports the API under that name), JetStream's own
   * `$JS.API` (the default) on a bus without accounts.
   */
  jsApiPrefix?: string;
}

/** JetStream keeps a stream on at most 5 nodes. */
export const MAX_JETSTREAM_REPLICAS = 5;

export const DEFAULT_NATS_URL = "nats://127.0.0.1:4222";

/**
 * Where `pnpm start` keeps the NATS it runs for a project. What a client needs to connect, the
 * server's config (with every identity's public key) and the CLI's own seed, lives in
 * `stateDir`, the project's private state directory outside the checkout (see local-state.ts);
 * every other identity's seed exists only in toolbus's memory. The JetStream store, data rather
 * than a credential, stays in the project (`dataDir`, `<project>/.toolbus/nats`).
 */
export function localNatsPaths(stateDir: string, dataDir: string) {
  return { ...localNatsStateFiles(stateDir), store: join(dataDir, "jetstream") };
}

/** The private part of localNatsPaths: the config, the CLI's seed and the URL. */
export function localNatsStateFiles(stateDir: string) {
  const dir = join(stateDir, "nats");
  return {
    dir,
    conf: join(dir, "nats.conf"),
    /** The `cli` identity's seed, for the `toolbus` CLI run in the same project. */
    cliSeed: seedFileOf(dir, "cli"),
    /** The URL of the nats-server a running `pnpm start` started; removed when it stops. */
    url: join(dir, "url"),
  };
}

/**
 * What `pnpm start` wrote into `<project>/.toolbus/nats` before its secrets moved out of the
 * checkout: every identity's seed (`identities/`), the config and the URL. Removed at start.
 */
export function legacyLocalNatsFiles(dataDir: string): string[] {
  return [join(dataDir, "identities"), join(dataDir, "nats.conf"), join(dataDir, "url")];
}

/**
 * The URL of the NATS a `pnpm start` runs for the project whose state is in `stateDir`, and the
 * directory holding the CLI's identity (`seedFileOf(identitiesDir, "cli")`), if one runs.
 */
export function runningLocalNats(stateDir: string): { url: string; identitiesDir: string } | undefined {
  const paths = localNatsStateFiles(stateDir);
  if (!existsSync(paths.url)) return undefined;
  return { url: readFileSync(paths.url, "utf8").trim(), identitiesDir: paths.dir };
}

/** The seed file of one identity in a directory `writeNatsIdentities` wrote (`<name>.nk`). */
export function seedFileOf(dir: string, identity: Identity | Role): string {
  return join(dir, `${identityName(typeof identity === "string" ? identityOf(identity) : identity)}.nk`);
}

/** The `accounts` block file in a directory `writeNatsIdentities` wrote. */
export function authConfOf(dir: string): string {
  return join(dir, "auth.conf");
}

export interface NatsIdentities {
  dir: string;
  authConf: string;
  /** Every identity written, one per role and one connector per server. */
  identities: readonly Identity[];
  /** Public key of each identity (`U…`), by its name (`dispatcher`, `connector-github`). */
  publicKeys: ReadonlyMap<string, string>;
  seedFile(identity: Identity | Role): string;
}

/** A new NKey user seed (`SU…`). */
export function newSeed(): string {
  return new TextDecoder().decode(nkeys.createUser().getSeed());
}

/** The public key (`U…`) of a user seed. */
export function publicKeyOf(seed: string): string {
  return nkeys.fromSeed(new TextEncoder().encode(seed)).getPublicKey();
}

/**
 * The nats-server `accounts` block of a bus whose config has `servers`: one account per identity
 * (see `busLayout`), each user given by the public key of its seed.
 */
export function authConfFor(options: {
  prefix: string;
  servers: readonly string[];
  publicKey: (identity: Identity) => string;
}): string {
  return renderAuthConf(busLayout(createSubjects(options.prefix), options.servers), options.publicKey);
}

/** Every identity's NKey for one run, held in memory only: nothing of it is written anywhere. */
export interface GeneratedNatsIdentities {
  /** One per role and one connector per server (`busLayout`). */
  identities: readonly Identity[];
  /** Public key of each identity (`U…`), by its name (`dispatcher`, `connector-github`). */
  publicKeys: ReadonlyMap<string, string>;
  /** The seed text (`SU…`) of each identity, by its name. */
  seeds: ReadonlyMap<string, string>;
  /** The nats-server `accounts` block: public keys, allow lists, imports and exports (no secret). */
  authConf: string;
}

/** A fresh NKey for every identity of a bus whose config has `servers`, in memory (`pnpm start`'s). */
export function generateNatsIdentities(options: {
  prefix: string;
  servers: readonly string[];
}): GeneratedNatsIdentities {
  const layout = busLayout(createSubjects(options.prefix), options.servers);
  const seeds = new Map<string, string>();
  const publicKeys = new Map<string, string>();
  for (const identity of layout.identities) {
    const seed = newSeed();
    seeds.set(identityName(identity), seed);
    publicKeys.set(identityName(identity), publicKeyOf(seed));
  }
  return {
    identities: layout.identities,
    publicKeys,
    seeds,
    authConf: renderAuthConf(layout, (identity) => publicKeys.get(identityName(identity)) as string),
  };
}

/**
 * Writes `<dir>/<name>.nk` for every identity of a bus whose config has `servers` (0600; an
 * existing seed is kept unless `rotate`), and `<dir>/auth.conf`, the nats-server `accounts`
 * block with each identity's public key, allow lists, imports and exports.
 */
export function writeNatsIdentities(options: {
  dir: string;
  prefix: string;
  /** The MCP servers of the config: each gets a connector identity of its own. */
  servers: readonly string[];
  rotate?: boolean;
}): NatsIdentities {
  const { dir } = options;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const layout = busLayout(createSubjects(options.prefix), options.servers);
  const publicKeys = new Map<string, string>();
  for (const identity of layout.identities) {
    const file = seedFileOf(dir, identity);
    const name = identityName(identity);
    let seed: string | undefined;
    if (!options.rotate && existsSync(file)) seed = readSeedFile(file, `${name}'s seed file`);
    if (seed === undefined) {
      seed = newSeed();
      writePrivateFile(file, `${seed}\n`);
    }
    publicKeys.set(name, publicKeyOf(seed));
  }
  const authConf = authConfOf(dir);
  writePrivateFile(
    authConf,
    renderAuthConf(layout, (identity) => publicKeys.get(identityName(identity)) as string),
  );
  return {
    dir,
    authConf,
    identities: layout.identities,
    publicKeys,
    seedFile: (identity) => seedFileOf(dir, identity),
  };
}

/** The seed in a file, or a ConfigError that says what is wrong with it and what to do. */
export function readSeedFile(file: string, what = `NATS_NKEY_FILE=${file}`): string {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : String(error);
    throw new ConfigError([
      `${what}: cannot read it (${reason}); write the identities with \`toolbus nats-config --out <dir>\` and point NATS_NKEY_FILE at <dir>/<role>.nk`,
    ]);
  }
  const seed = text.trim();
  try {
    if (!seed.startsWith("SU")) throw new Error("not a user seed");
    nkeys.fromSeed(new TextEncoder().encode(seed));
  } catch {
    throw new ConfigError([
      `${what}: is not an NKey user seed (one line starting with "SU"); use a file written by \`toolbus nats-config\``,
    ]);
  }
  return seed;
}

/** Splits `NATS_URL` into server URLs; throws ConfigError naming a URL that does not parse. */
export function natsServers(value: string | undefined): string[] {
  const servers = (value ?? DEFAULT_NATS_URL)
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (servers.length === 0) return [DEFAULT_NATS_URL];
  for (const server of servers) {
    const withScheme = /^[a-z]+:\/\//i.test(server) ? server : `nats://${server}`;
    if (!URL.canParse(withScheme)) {
      throw new ConfigError([
        `NATS_URL: ${maskUrl(server)} is not a URL; use nats://host:port, or a comma-separated list of them`,
      ]);
    }
  }
  return servers;
}

/** The NATS access of a process from its environment; throws ConfigError listing every problem. */
export function natsAccessFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  identity: { prefix: string; role: Role } | { prefix: string; identity: Identity },
): NatsAccess {
  const who = "identity" in identity ? identity.identity : identityOf(identity.role);
  const problems: string[] = [];
  let servers: string[] = [DEFAULT_NATS_URL];
  try {
    servers = natsServers(env.NATS_URL || undefined);
  } catch (error) {
    if (error instanceof ConfigError) problems.push(...error.problems);
    else throw error;
  }
  const access: NatsAccess = {
    servers,
    inboxPrefix: inboxPrefix(identity.prefix, who),
    identity: identityName(who),
  };
  // A connector's seed is its own file beside the catalog's (NATS_NKEY_FILE), or in NATS_NKEY_DIR.
  const nkeyFile = who.role === "connector" ? connectorSeedFile(env, who) : env.NATS_NKEY_FILE || undefined;
  if (nkeyFile !== undefined) {
    try {
      access.nkeySeed = readSeedFile(nkeyFile);
      access.credentialSource = `${who.role === "connector" ? "seed file " : "NATS_NKEY_FILE="}${nkeyFile}`;
      // An identity of `toolbus nats-config` reaches JetStream through its account's imports;
      // the provisioner lives where the streams are.
      if (who.role !== "provisioner") access.jsApiPrefix = LOCAL_JS_API;
    } catch (error) {
      if (error instanceof ConfigError) problems.push(...error.problems);
      else throw error;
    }
  }
  if (env.NATS_JS_API_PREFIX) access.jsApiPrefix = env.NATS_JS_API_PREFIX;
  const password = secretFromEnv(env, "NATS_PASSWORD");
  if (password.state === "invalid") problems.push(password.message);
  if (env.NATS_USER) {
    if (nkeyFile !== undefined) {
      problems.push("NATS_USER: set together with NATS_NKEY_FILE; use one kind of credentials");
    }
    access.user = env.NATS_USER;
    if (password.state === "set" && password.value !== "") access.password = password.value;
    else if (password.state !== "invalid") {
      problems.push(
        "NATS_PASSWORD: missing; NATS_USER needs it (NATS_PASSWORD_FILE, a file holding it, keeps it out of the environment)",
      );
    }
    access.credentialSource ??= `NATS_USER=${env.NATS_USER}`;
  }
  const tls: NatsTlsFiles = {};
  for (const [key, field] of [
    ["NATS_TLS_CA_FILE", "caFile"],
    ["NATS_TLS_CERT_FILE", "certFile"],
    ["NATS_TLS_KEY_FILE", "keyFile"],
  ] as const) {
    const file = env[key] || undefined;
    if (file === undefined) continue;
    if (!existsSync(file)) problems.push(`${key}: ${file} does not exist; give the path of a PEM file`);
    tls[field] = file;
  }
  if ((tls.certFile === undefined) !== (tls.keyFile === undefined)) {
    problems.push(
      "NATS_TLS_CERT_FILE / NATS_TLS_KEY_FILE: set both (a client certificate needs its key), or neither",
    );
  }
  if (Object.keys(tls).length > 0) access.tls = tls;
  const replicas = env.TOOLBUS_JS_REPLICAS || undefined;
  if (replicas !== undefined) {
    const count = Number(replicas);
    if (Number.isInteger(count) && count >= 1 && count <= MAX_JETSTREAM_REPLICAS)
      access.jetStreamReplicas = count;
    else
      problems.push(
        `TOOLBUS_JS_REPLICAS: ${JSON.stringify(replicas)} is not a whole number from 1 to ${MAX_JETSTREAM_REPLICAS}; ` +
          "use 1 on a single nats-server, the cluster's node count (3 or 5) on a cluster",
      );
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return access;
}

/**
 * Where a connector's seed is: `<NATS_NKEY_DIR>/connector-<server>.nk`, else beside the catalog's
 * own seed (`NATS_NKEY_FILE`), where `toolbus nats-config` writes them all; undefined on a bus
 * without credentials.
 */
function connectorSeedFile(env: Readonly<Record<string, string | undefined>>, connector: Identity) {
  const dir = env.NATS_NKEY_DIR || (env.NATS_NKEY_FILE ? dirname(env.NATS_NKEY_FILE) : undefined);
  return dir === undefined ? undefined : seedFileOf(dir, connector);
}

/** True when the access carries credentials of any kind (an NKey, a user, or a user in the URL). */
export function hasCredentials(access: NatsAccess): boolean {
  return (
    access.nkeySeed !== undefined ||
    access.user !== undefined ||
    access.servers.some((server) => /^[a-z]+:\/\/[^/@]+@/i.test(server))
  );
}

/**
 * A service could not start (bad settings, refused credentials, no NATS, a start-up the service
 * refused): one line on stderr naming what is wrong, then exit 1 — no stack trace for a problem
 * the operator must fix. With the service's logger, the error is also logged at `fatal`.
 */
export function exitWithStartupError(service: string, error: unknown, logger?: Logger): never {
  let message = error instanceof Error ? error.message : String(error);
  logger?.fatal({ err: error }, message);
  const cause = error instanceof Error ? error.cause : undefined;
  if (error instanceof PermissionViolationError || cause instanceof PermissionViolationError) {
    message +=
      `: the ${service} identity may not do that. Is NATS_NKEY_FILE the ${service} service's own key, ` +
      "and does the server's config come from the same toolbus nats-config run (and TOOLBUS_PREFIX)?";
  }
  process.stderr.write(`${service}: ${message.replaceAll("\n", " ")}\n`);
  process.exit(1);
}

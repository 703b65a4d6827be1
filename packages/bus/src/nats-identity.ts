/**
 * NATS identities: the NKey each toolbus role connects with, the files they live in, and the
 * environment a process reads its own from. `writeNatsIdentities` is what `toolbus nats-config`
 * and `pnpm start` run; `natsAccessFromEnv` is what every service runs at start-up.
 *
 * Environment of a process (all optional; without credentials the bus is unauthenticated):
 * - `NATS_URL`: one URL or a comma-separated list (a cluster); `user:password@` is allowed.
 * - `NATS_NKEY_FILE`: the file holding this identity's NKey seed (`SU…`), from `toolbus nats-config`.
 * - `NATS_USER` / `NATS_PASSWORD` (or `NATS_PASSWORD_FILE`, a file holding it): user and
 *   password instead of an NKey.
 * - `NATS_TLS_CA_FILE`, `NATS_TLS_CERT_FILE`, `NATS_TLS_KEY_FILE`: TLS to NATS (a `tls://` URL
 *   or a CA file turns TLS on; cert and key are for servers that verify clients).
 * - `TOOLBUS_JS_REPLICAS`: how many JetStream nodes keep each stream and KV bucket the process
 *   creates (default 1, for a single nats-server; 3 on a 3-node cluster).
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { nkeys, PermissionViolationError } from "@nats-io/nats-core";
import { secretFromEnv } from "@toolbus/config";
import { createSubjects, inboxPrefix, permissionsFor, ROLES, type Role } from "@toolbus/protocol";
import { ConfigError } from "./config.js";
import { maskUrl } from "./core/mask-url.js";
import { type AuthUser, renderAuthConf } from "./core/nats-auth-conf.js";
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
  /** Replicas of every stream and KV bucket this process creates (`TOOLBUS_JS_REPLICAS`); default 1. */
  jetStreamReplicas?: number;
}

/** JetStream keeps a stream on at most 5 nodes. */
export const MAX_JETSTREAM_REPLICAS = 5;

export const DEFAULT_NATS_URL = "nats://127.0.0.1:4222";

/**
 * Where `pnpm start` keeps the NATS it runs for a project. What a client needs to connect, the
 * server's config (with every role's public key) and the CLI's own seed, lives in `stateDir`,
 * the project's private state directory outside the checkout (see local-state.ts); every other
 * role's seed exists only in toolbus's memory. The JetStream store, data rather than a
 * credential, stays in the project (`dataDir`, `<project>/.toolbus/nats`).
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
 * checkout: every role's seed (`identities/`), the config and the URL. Removed at start.
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

/** The seed file of one role in a directory `writeNatsIdentities` wrote. */
export function seedFileOf(dir: string, role: Role): string {
  return join(dir, `${role}.nk`);
}

/** The `accounts` block file in a directory `writeNatsIdentities` wrote. */
export function authConfOf(dir: string): string {
  return join(dir, "auth.conf");
}

export interface NatsIdentities {
  dir: string;
  authConf: string;
  /** Public key of each role (`U…`). */
  publicKeys: ReadonlyMap<Role, string>;
  seedFile(role: Role): string;
}

/** Every role's identity for one run, held in memory only: nothing of it is written anywhere. */
export interface GeneratedNatsIdentities {
  /** Public key of each role (`U…`). */
  publicKeys: ReadonlyMap<Role, string>;
  /** The seed text (`SU…`) of each role. */
  seeds: ReadonlyMap<Role, string>;
  /** The nats-server `accounts` block: each role's public key and permissions (no secret). */
  authConf: string;
}

/** A fresh NKey for every role of `roles` (default every role toolbus has), in memory. */
export function generateNatsIdentities(options: {
  prefix: string;
  roles?: readonly Role[];
}): GeneratedNatsIdentities {
  const seeds = new Map<Role, string>();
  for (const role of options.roles ?? ROLES) seeds.set(role, newSeed());
  return { seeds, ...identitiesOf(seeds, options.prefix) };
}

/**
 * Writes `<dir>/<role>.nk` for every role (0600; an existing seed is kept unless `rotate`), and
 * `<dir>/auth.conf`, the nats-server `accounts` block with each role's public key and permissions.
 */
export function writeNatsIdentities(options: {
  dir: string;
  prefix: string;
  rotate?: boolean;
  roles?: readonly Role[];
}): NatsIdentities {
  const { dir } = options;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const seeds = new Map<Role, string>();
  for (const role of options.roles ?? ROLES) {
    const file = seedFileOf(dir, role);
    let seed: string | undefined;
    if (!options.rotate && existsSync(file)) seed = readSeedFile(file, `${role}'s seed file`);
    if (seed === undefined) {
      seed = newSeed();
      writePrivateFile(file, `${seed}\n`);
    }
    seeds.set(role, seed);
  }
  const { publicKeys, authConf: text } = identitiesOf(seeds, options.prefix);
  const authConf = authConfOf(dir);
  writePrivateFile(authConf, text);
  return { dir, authConf, publicKeys, seedFile: (role) => seedFileOf(dir, role) };
}

function newSeed(): string {
  return new TextDecoder().decode(nkeys.createUser().getSeed());
}

/** Each seed's public key, and the accounts block that lets exactly those keys in. */
function identitiesOf(
  seeds: ReadonlyMap<Role, string>,
  prefix: string,
): { publicKeys: Map<Role, string>; authConf: string } {
  const subjects = createSubjects(prefix);
  const publicKeys = new Map<Role, string>();
  const users: AuthUser[] = [];
  for (const [role, seed] of seeds) {
    const publicKey = nkeys.fromSeed(new TextEncoder().encode(seed)).getPublicKey();
    publicKeys.set(role, publicKey);
    users.push({ role, publicKey, permissions: permissionsFor(role, subjects) });
  }
  return { publicKeys, authConf: renderAuthConf({ prefix: subjects.prefix, users }) };
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
  identity: { prefix: string; role: Role },
): NatsAccess {
  const problems: string[] = [];
  let servers: string[] = [DEFAULT_NATS_URL];
  try {
    servers = natsServers(env.NATS_URL || undefined);
  } catch (error) {
    if (error instanceof ConfigError) problems.push(...error.problems);
    else throw error;
  }
  const access: NatsAccess = { servers, inboxPrefix: inboxPrefix(identity.prefix, identity.role) };
  const nkeyFile = env.NATS_NKEY_FILE || undefined;
  if (nkeyFile !== undefined) {
    try {
      access.nkeySeed = readSeedFile(nkeyFile);
      access.credentialSource = `NATS_NKEY_FILE=${nkeyFile}`;
    } catch (error) {
      if (error instanceof ConfigError) problems.push(...error.problems);
      else throw error;
    }
  }
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

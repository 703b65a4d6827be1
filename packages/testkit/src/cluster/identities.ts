/**
 * The cluster's NATS identities and assets, made as an operator makes them, with the CLI:
 * `toolbus nats-config --out <dir> --config <toolbus.toml>` (each identity's `<name>.nk` seed —
 * one per role, one per configured server's connector — and `auth.conf`, the accounts block),
 * then `toolbus provision` as the provisioner once the cluster answers.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Role } from "@toolbus/protocol";
import { ROOT } from "./services.js";

const CLI_TIMEOUT_MS = 60_000;
const CLI = join(ROOT, "packages", "cli", "bin", "toolbus.js");

export interface ClusterIdentities {
  dir: string;
  /** The `accounts { … }` block every node includes. */
  authConf: string;
  seedFile(role: Role): string;
  /** The seed text (`SU…`) of a role. */
  seed(role: Role): string;
}

async function toolbus(args: string[], env: NodeJS.ProcessEnv, timeoutMs = CLI_TIMEOUT_MS): Promise<void> {
  try {
    await promisify(execFile)(process.execPath, [CLI, ...args], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      timeout: timeoutMs,
    });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? "";
    throw new Error(`toolbus ${args.join(" ")} failed: ${(error as Error).message} ${stderr}`.trim());
  }
}

export async function writeClusterIdentities(
  dir: string,
  prefix: string,
  configPath: string,
): Promise<ClusterIdentities> {
  await toolbus(["nats-config", "--out", dir, "--config", configPath, "--json"], { TOOLBUS_PREFIX: prefix });
  const seedFile = (role: Role) => join(dir, `${role}.nk`);
  return {
    dir,
    authConf: join(dir, "auth.conf"),
    seedFile,
    seed: (role) => readFileSync(seedFile(role), "utf8").trim(),
  };
}

/** `toolbus provision` as the provisioner, with every node's URL and the cluster's replicas. */
export async function provisionCluster(options: {
  identities: ClusterIdentities;
  natsUrls: readonly string[];
  prefix: string;
  replicas: number;
  configPath: string;
  timeoutMs: number;
}): Promise<void> {
  await toolbus(
    ["provision", "--config", options.configPath],
    {
      NATS_URL: options.natsUrls.join(","),
      NATS_NKEY_FILE: options.identities.seedFile("provisioner"),
      TOOLBUS_PREFIX: options.prefix,
      TOOLBUS_JS_REPLICAS: String(options.replicas),
    },
    options.timeoutMs,
  );
}

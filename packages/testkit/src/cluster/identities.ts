/**
 * The cluster's NATS identities, written as an operator writes them: `toolbus nats-config --out
 * <dir>` (each role's `<role>.nk` seed and `auth.conf`, the accounts block with every role's
 * allow lists). The CLI is run rather than imported so testkit does not depend on @toolbus/bus,
 * which depends on testkit for its own tests.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Role } from "@toolbus/protocol";
import { ROOT } from "./services.js";

const NATS_CONFIG_TIMEOUT_MS = 60_000;

export interface ClusterIdentities {
  dir: string;
  /** The `accounts { TOOLBUS … }` block every node includes. */
  authConf: string;
  seedFile(role: Role): string;
  /** The seed text (`SU…`) of a role. */
  seed(role: Role): string;
}

export async function writeClusterIdentities(dir: string, prefix: string): Promise<ClusterIdentities> {
  const cli = join(ROOT, "packages", "cli", "bin", "toolbus.js");
  try {
    await promisify(execFile)(process.execPath, [cli, "nats-config", "--out", dir, "--json"], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, TOOLBUS_PREFIX: prefix },
      timeout: NATS_CONFIG_TIMEOUT_MS,
    });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? "";
    throw new Error(`toolbus nats-config --out ${dir} failed: ${(error as Error).message} ${stderr}`.trim());
  }
  const seedFile = (role: Role) => join(dir, `${role}.nk`);
  return {
    dir,
    authConf: join(dir, "auth.conf"),
    seedFile,
    seed: (role) => readFileSync(seedFile(role), "utf8").trim(),
  };
}

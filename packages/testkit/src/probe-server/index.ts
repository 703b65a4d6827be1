/**
 * `@toolbus/testkit/probe-server`: the hostile stdio MCP server of probe-server.mjs, installed
 * where any user can run it, and the shapes of what it reports.
 */
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export interface ProbeServer {
  command: string;
  args: string[];
  dispose(): void;
}

/** One place `loot` tried. */
export interface LootPlace {
  place: string;
  readable: boolean;
  /** Bytes it read there. */
  read: number;
  /** Why it could not read it (`EACCES`, …), when it could not. */
  error?: string;
  /** The needles found there, by name. */
  found: string[];
  /** Every NKey user seed found there, by the first 16 hex of its SHA-256. */
  seeds: string[];
}

export interface LootReport {
  parent: number;
  places: LootPlace[];
}

export interface WhoAmI {
  uid: number;
  gid: number;
  groups: number[];
  cwd: string;
  env: Record<string, string>;
}

// Through src/ from src/ and dist/ alike: tsc does not copy the .mjs.
const SCRIPT = fileURLToPath(new URL("../../src/probe-server/probe-server.mjs", import.meta.url));

/**
 * A copy of the probe server in a fresh directory anyone may read (0755, the file 0644), run by
 * the Node running the tests: a server run as `nobody` cannot read a checkout under a home.
 */
export function installProbeServer(): ProbeServer {
  const dir = mkdtempSync(join(tmpdir(), "toolbus-probe-"));
  chmodSync(dir, 0o755);
  const script = join(dir, "probe-server.mjs");
  copyFileSync(SCRIPT, script);
  chmodSync(script, 0o644);
  return {
    command: process.execPath,
    args: [script],
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export { probeHash } from "./probe-hash.js";

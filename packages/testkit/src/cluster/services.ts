/**
 * How each toolbus service runs as its own OS process: its entry point from source (as
 * `pnpm start` and the benchmarks run them), its flags, the environment it needs and nothing
 * more, and the log line that says it is ready.
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { QueueGroup } from "@toolbus/protocol";
import type { ProcessSpec } from "./managed-process.js";

/** The five services, in the order the harness lists them. */
export const SERVICE_ROLES = ["catalog", "dispatcher", "approvals", "memory", "gateway"] as const;
export type ServiceRole = (typeof SERVICE_ROLES)[number] & QueueGroup;

/** The checkout (from src/cluster/ or dist/cluster/ of packages/testkit). */
export const ROOT = fileURLToPath(new URL("../../../..", import.meta.url));
/** tsx's loader by URL, resolved from the checkout's root (where it is a dependency). */
const TSX = pathToFileURL(createRequire(join(ROOT, "package.json")).resolve("tsx")).href;

/** The line each service logs once it serves (pino JSON, so matched on the message). */
const READY_LINE: Record<ServiceRole, RegExp> = {
  catalog: /"msg":"catalog ready"/,
  dispatcher: /"msg":"dispatcher ready"/,
  approvals: /"msg":"approvals inbox at /,
  memory: /"msg":"memory ready"/,
  gateway: /"msg":"gateway listening on /,
};

export interface ServiceLaunch {
  role: ServiceRole;
  index: number;
  natsUrls: readonly string[];
  identitiesDir: string;
  prefix: string;
  replicas: number;
  configPath: string;
  databaseUrl: string;
  /** The gateway's and the approvals inbox's HTTP port. */
  httpPort?: number;
  readyTimeoutMs: number;
  startupRetries: number;
}

export function serviceSpec(launch: ServiceLaunch): ProcessSpec {
  const { role } = launch;
  const args = ["--config", launch.configPath];
  if (launch.httpPort !== undefined) args.push("--host", "127.0.0.1", "--port", String(launch.httpPort));
  return {
    name: `${role}[${launch.index}]`,
    command: process.execPath,
    args: [
      "--conditions=@toolbus/source",
      "--import",
      TSX,
      join(ROOT, "services", role, "src", "main.ts"),
      ...args,
    ],
    env: serviceEnv(launch),
    readyLine: READY_LINE[role],
    ...(role === "gateway" && launch.httpPort !== undefined
      ? { probe: () => answers200(`http://127.0.0.1:${launch.httpPort}/readyz`) }
      : {}),
    readyTimeoutMs: launch.readyTimeoutMs,
    // Creating a replicated stream can outlast the JetStream API timeout while a busy cluster
    // elects its leaders; the service then exits, and a deployment would start it again.
    startupRetries: launch.startupRetries,
  };
}

/** Only what the service reads: no credentials of other roles, no database for those without one. */
function serviceEnv(launch: ServiceLaunch): NodeJS.ProcessEnv {
  const needsDatabase = launch.role === "approvals" || launch.role === "memory";
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NATS_URL: launch.natsUrls.join(","),
    NATS_NKEY_FILE: join(launch.identitiesDir, `${launch.role}.nk`),
    TOOLBUS_PREFIX: launch.prefix,
    TOOLBUS_JS_REPLICAS: String(launch.replicas),
    // The ready lines are logged at info.
    LOG_LEVEL: "info",
    ...(needsDatabase ? { DATABASE_URL: launch.databaseUrl } : {}),
  };
}

async function answers200(url: string): Promise<boolean> {
  const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
  return response.ok;
}

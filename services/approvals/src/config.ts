/**
 * The approvals service's configuration: one zod schema with every default
 * (`ApprovalsServiceConfigSchema`, also what `startApprovalsService` takes), and
 * `loadApprovalsConfig`, which gathers it from the environment, the command line, toolbus.toml
 * (approval modes, `[approvals]`) and the hooks file, reports every problem at once, and freezes it.
 */
import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import {
  ConfigError,
  LogLevelSetting,
  loadConfig,
  NatsUrlSetting,
  PrefixSetting,
  SERVICE_SETTINGS_ENV,
  serviceSettingsInput,
} from "@toolbus/bus";
import {
  ConfigFileError,
  DEFAULT_ALLOWED_HOSTS,
  DEFAULT_APPROVAL_TIMEOUT_MS,
  DEFAULT_APPROVALS_PORT,
  DEFAULT_EDGE_LIMITS,
  DEFAULT_MAX_CONCURRENT_HOOKS,
  GATEWAY_ROLES,
  loadToolbusConfig,
  resolveGatewayTokens,
  secretFromEnv,
  type ToolbusConfig,
} from "@toolbus/config";
import {
  ApprovalPolicySchema,
  HookEventsSchema,
  type HooksConfig,
  PermissionProfileSchema,
  parseHooksFile,
  ServerModesSchema,
  serverModesOf,
} from "@toolbus/policy";
import { z } from "zod";

const Port = z.int().min(0).max(65535);

export const ApprovalsServiceConfigSchema = z.object({
  natsUrl: NatsUrlSetting,
  /** Pending requests and persistent grants live here; required. */
  databaseUrl: z.string().min(1),
  prefix: PrefixSetting,
  /** The level of the service's own logger (one passed in `deps.logger` keeps its own). */
  logLevel: LogLevelSetting,
  /** `never`: no human is ever asked; a call that would need one is denied. */
  policy: ApprovalPolicySchema,
  /** `full-access` with policy `never`: every call runs without asking anyone. */
  permissionProfile: PermissionProfileSchema,
  /** How long a human has to answer (`[approvals] timeout_sec`). */
  timeoutMs: z.int().positive().default(DEFAULT_APPROVAL_TIMEOUT_MS),
  /** Command hooks running at once across the service (`[approvals] max_concurrent_hooks`). */
  maxConcurrentHooks: z.int().positive().default(DEFAULT_MAX_CONCURRENT_HOOKS),
  /** Whether a call's requester may answer its approval (`[approvals] self_approve`). */
  selfApprove: z.boolean().default(false),
  /** The parsed hooks file (`[approvals] hooks`). */
  hooks: HookEventsSchema.prefault({}),
  /** Approval modes by server name; a server not listed is `auto` for every tool. */
  servers: z.record(z.string(), ServerModesSchema).default({}),
  /**
   * The inbox and REST routes; `false`: none (another process, e.g. the gateway, serves them).
   * Guarded as the gateway is, with its `[gateway]` settings: `allowed_hosts`, the tokens of
   * `tokens_env`, `allow_unauthenticated`, `max_streams`, `max_streams_per_client`.
   */
  http: z
    .union([
      z.literal(false),
      z.object({
        host: z.string().min(1).default("127.0.0.1"),
        port: Port.default(DEFAULT_APPROVALS_PORT),
        allowedHosts: z.array(z.string().min(1)).default(() => [...DEFAULT_ALLOWED_HOSTS]),
        /** Bearer tokens with their principals; none: auth off (loopback only, unless allowed). */
        principals: z
          .array(z.object({ name: z.string().min(1), role: z.enum(GATEWAY_ROLES), token: z.string().min(1) }))
          .default([]),
        allowUnauthenticated: z.boolean().default(false),
        maxStreams: z.int().positive().default(DEFAULT_EDGE_LIMITS.maxStreams),
        maxStreamsPerClient: z.int().positive().default(DEFAULT_EDGE_LIMITS.maxStreamsPerClient),
      }),
    ])
    .prefault({}),
  /** How often a waiting decide re-reads its request without a wake-up (a safety net). */
  pollIntervalMs: z.int().positive().default(5_000),
  /** How often requests nobody waits for are timed out. */
  sweepIntervalMs: z.int().positive().default(5_000),
  /** How long in-flight requests may finish on shutdown. */
  shutdownGraceMs: z.int().nonnegative().default(10_000),
  /** Postgres pool size. */
  poolSize: z.int().positive().default(10),
});
export type ApprovalsServiceConfigInput = z.input<typeof ApprovalsServiceConfigSchema>;
export type ApprovalsServiceConfig = z.output<typeof ApprovalsServiceConfigSchema>;

export interface LoadOptions {
  env: Readonly<Record<string, string | undefined>>;
  /** Command-line arguments after the script: `--config <path>`, `--host <h>`, `--port <n>`. */
  argv?: readonly string[];
  cwd?: string;
}

/** Throws `ConfigError` listing every problem found, in the environment and in the files. */
export async function loadApprovalsConfig(options: LoadOptions): Promise<Readonly<ApprovalsServiceConfig>> {
  const problems: string[] = [];
  const env = options.env;
  const args = commandLine(options.argv ?? [], problems);
  const toolbus = await toolbusConfig(args.config, options, problems);
  const tokens = toolbus === undefined ? undefined : resolveGatewayTokens(toolbus.gateway, env);
  if (tokens !== undefined && !tokens.ok) problems.push(tokens.message);
  // DATABASE_URL, or DATABASE_URL_FILE naming a file that holds it.
  const database = secretFromEnv(env, "DATABASE_URL");
  if (database.state === "invalid") problems.push(database.message);
  const hooks =
    toolbus?.approvals.hooksPath === undefined
      ? undefined
      : await hooksFile(toolbus.approvals.hooksPath, problems);
  const raw = {
    // Its configPath is not kept: the config file was read above.
    ...serviceSettingsInput(env, args.config),
    databaseUrl: database.state === "set" ? nonEmpty(database.value) : undefined,
    policy: nonEmpty(env.TOOLBUS_APPROVAL_POLICY),
    permissionProfile: nonEmpty(env.TOOLBUS_PERMISSION_PROFILE),
    timeoutMs: toolbus?.approvals.timeoutMs,
    maxConcurrentHooks: toolbus?.approvals.maxConcurrentHooks,
    selfApprove: toolbus?.approvals.selfApprove,
    hooks,
    servers: toolbus === undefined ? undefined : serverModesOf(toolbus.mcpServers),
    http: {
      host: args.host,
      port: args.port === undefined ? toolbus?.approvals.port : portNumber(args.port, problems),
      allowedHosts: toolbus?.gateway.allowedHosts,
      principals: tokens?.ok ? tokens.principals : undefined,
      allowUnauthenticated: toolbus?.gateway.allowUnauthenticated,
      maxStreams: toolbus?.gateway.maxStreams,
      maxStreamsPerClient: toolbus?.gateway.maxStreamsPerClient,
    },
  };
  try {
    const config = loadConfig(ApprovalsServiceConfigSchema, raw, ENV_NAMES);
    if (problems.length > 0) throw new ConfigError(problems);
    return config;
  } catch (error) {
    if (error instanceof ConfigError) throw new ConfigError([...problems, ...error.problems]);
    throw error;
  }
}

function commandLine(
  argv: readonly string[],
  problems: string[],
): { config?: string; host?: string; port?: string } {
  try {
    const { values } = parseArgs({
      args: [...argv],
      options: { config: { type: "string" }, host: { type: "string" }, port: { type: "string" } },
      strict: true,
    });
    return values;
  } catch (error) {
    problems.push(
      `command line: ${(error as Error).message} (accepted: --config <path>, --host <host>, --port <port>)`,
    );
    return {};
  }
}

async function toolbusConfig(
  path: string | undefined,
  options: LoadOptions,
  problems: string[],
): Promise<ToolbusConfig | undefined> {
  try {
    return await loadToolbusConfig({
      path,
      env: options.env,
      cwd: options.cwd ?? process.cwd(),
      // With no config file, approvals only needs the defaults: the demo server is never started here.
      demoServer: () => ({ command: "server-everything", args: ["stdio"] }),
    });
  } catch (error) {
    if (error instanceof ConfigFileError) {
      problems.push(
        ...error.problems.map((p) => `${error.path}: ${p.at === "" ? "" : `${p.at}: `}${p.message}`),
      );
    } else {
      problems.push((error as Error).message);
    }
    return undefined;
  }
}

async function hooksFile(path: string, problems: string[]): Promise<HooksConfig | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    problems.push(
      `${path}: cannot read the hooks file named by [approvals] hooks: ${(error as Error).message}`,
    );
    return undefined;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    problems.push(`${path}: the hooks file is not valid JSON (${(error as Error).message})`);
    return undefined;
  }
  const parsed = parseHooksFile(json);
  if (!parsed.ok) {
    problems.push(`${path}: ${parsed.message}`);
    return undefined;
  }
  return parsed.value;
}

function portNumber(text: string, problems: string[]): number | undefined {
  if (/^\d+$/.test(text) && Number(text) <= 65535) return Number(text);
  problems.push(`--port: must be a port from 0 to 65535, got ${JSON.stringify(text)}`);
  return undefined;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}

// Schema fields → the variables a user sets, to name them in a problem.
const ENV_NAMES: Record<string, string> = {
  ...SERVICE_SETTINGS_ENV,
  databaseUrl: "DATABASE_URL",
  policy: "TOOLBUS_APPROVAL_POLICY",
  permissionProfile: "TOOLBUS_PERMISSION_PROFILE",
};

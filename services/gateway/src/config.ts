/**
 * The gateway's own settings: environment and command line, validated once. The `[gateway]`
 * table (port, host, naming, tokens_env, allowed_hosts) comes from toolbus.toml; `--port` and
 * `--host` override it; `TOOLBUS_GATEWAY_*` set its limits.
 */
import {
  ConfigError,
  loadConfig,
  parseCommandLine,
  SERVICE_SETTINGS_ENV,
  ServiceSettingsSchema,
  type SettingsSource,
  serviceSettingsInput,
} from "@toolbus/bus";
import {
  type GatewayConfig,
  type GatewayPrincipal,
  loadToolbusConfig,
  resolveGatewayTokens,
  type ToolbusConfig,
} from "@toolbus/config";
import { z } from "zod";
import { DEFAULT_GATEWAY_LIMITS, type GatewayLimits } from "./gateway-service.js";

const Seconds = z.coerce.number().positive();

const GatewaySettingsSchema = ServiceSettingsSchema.extend({
  port: z.coerce.number().int().min(0).max(65535).optional(),
  host: z.string().min(1).optional(),
  /** `TOOLBUS_GATEWAY_SESSION_TTL_SEC`: idle sessions expire after this. */
  sessionIdleTtlSec: Seconds.default(DEFAULT_GATEWAY_LIMITS.sessionIdleTtlMs / 1000),
  /** `TOOLBUS_GATEWAY_MAX_SESSIONS`. */
  maxSessions: z.coerce.number().int().positive().default(DEFAULT_GATEWAY_LIMITS.maxSessions),
  /** `TOOLBUS_GATEWAY_BODY_LIMIT_BYTES`. */
  bodyLimitBytes: z.coerce.number().int().positive().default(DEFAULT_GATEWAY_LIMITS.bodyLimitBytes),
});
export type GatewaySettings = z.output<typeof GatewaySettingsSchema>;

export function loadGatewaySettings(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Readonly<GatewaySettings> {
  const values = parseCommandLine(argv, { config: "<path>", port: "<port>", host: "<host>" });
  return loadConfig(
    GatewaySettingsSchema,
    {
      ...serviceSettingsInput(env, values.config),
      port: values.port,
      host: values.host,
      sessionIdleTtlSec: env.TOOLBUS_GATEWAY_SESSION_TTL_SEC || undefined,
      maxSessions: env.TOOLBUS_GATEWAY_MAX_SESSIONS || undefined,
      bodyLimitBytes: env.TOOLBUS_GATEWAY_BODY_LIMIT_BYTES || undefined,
    },
    SERVICE_SETTINGS_ENV,
  );
}

/** What the gateway starts with: its settings, the toolbus.toml they name, and what follows from both. */
export interface GatewayServiceSettings extends GatewaySettings {
  config: ToolbusConfig;
  /** The bearer tokens of `[gateway] tokens_env` with their principals. */
  principals: GatewayPrincipal[];
  /** `[gateway]` with `--port` and `--host` applied: where it listens and how. */
  edge: GatewayConfig;
  limits: Pick<GatewayLimits, "sessionIdleTtlMs" | "maxSessions" | "bodyLimitBytes" | "callTimeoutMs">;
}

/** Throws `ConfigError` (or `ConfigFileError`) naming every problem. */
export async function readGatewaySettings(source: SettingsSource): Promise<GatewayServiceSettings> {
  const settings = loadGatewaySettings(source.argv, source.env);
  // The gateway starts no servers: with no config file it only needs the demo's [gateway] defaults.
  const config = await loadToolbusConfig({
    ...(settings.configPath ? { path: settings.configPath } : {}),
    env: source.env,
    cwd: source.cwd,
    demoServer: () => ({ command: "server-everything", args: [] }),
  });
  const tokens = resolveGatewayTokens(config.gateway, source.env);
  if (!tokens.ok) throw new ConfigError([tokens.message]);
  return {
    ...settings,
    config,
    principals: tokens.principals,
    edge: {
      ...config.gateway,
      ...(settings.port !== undefined ? { port: settings.port } : {}),
      ...(settings.host !== undefined ? { host: settings.host } : {}),
    },
    limits: {
      sessionIdleTtlMs: settings.sessionIdleTtlSec * 1000,
      maxSessions: settings.maxSessions,
      bodyLimitBytes: settings.bodyLimitBytes,
      // A call may wait for a human (the approval timeout), then six minutes for the tool itself.
      callTimeoutMs: config.approvals.timeoutMs + 6 * 60_000,
    },
  };
}

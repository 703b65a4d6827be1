/**
 * The gateway process's own settings: environment and command line, validated once. The
 * `[gateway]` table (port, host, naming, tokens_env, allowed_hosts) comes from toolbus.toml;
 * `--port` and `--host` override it.
 */
import {
  loadConfig,
  parseCommandLine,
  SERVICE_SETTINGS_ENV,
  ServiceSettingsSchema,
  serviceSettingsInput,
} from "@toolbus/bus";
import { z } from "zod";
import { DEFAULT_GATEWAY_LIMITS } from "./gateway-service.js";

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
  env: NodeJS.ProcessEnv,
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

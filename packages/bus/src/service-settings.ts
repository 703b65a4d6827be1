/**
 * The settings every toolbus service process reads the same way, defined once: `NATS_URL`,
 * `TOOLBUS_PREFIX`, the config file (`--config`, else `TOOLBUS_CONFIG`) and `LOG_LEVEL`. Each
 * field schema takes the raw value (unset, empty or blank all mean "use the default"), so a
 * service may key them by variable name (memory: problems then name the variable) or by field
 * (`ServiceSettingsSchema`, extended with the service's own settings).
 */
import { parseArgs } from "node:util";
import { DEFAULT_PREFIX, validatePrefix } from "@toolbus/protocol";
import { z } from "zod";
import { ConfigError } from "./config.js";
import { DEFAULT_NATS_URL } from "./nats-identity.js";

/** pino's levels, most severe first; `silent` logs nothing. */
export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];
export const DEFAULT_LOG_LEVEL: LogLevelName = "info";

const unsetIfBlank = (value: unknown) =>
  typeof value === "string" && value.trim() === "" ? undefined : value;

/** `NATS_URL`: one URL or a comma-separated list (natsAccessFromEnv reads and checks each). */
export const NatsUrlSetting = z.preprocess(unsetIfBlank, z.string().default(DEFAULT_NATS_URL));

/** `TOOLBUS_PREFIX`: the subject prefix, checked as the protocol checks it. */
export const PrefixSetting = z.preprocess(
  unsetIfBlank,
  z
    .string()
    .default(DEFAULT_PREFIX)
    .superRefine((prefix, ctx) => {
      try {
        validatePrefix(prefix);
      } catch (error) {
        ctx.addIssue({ code: "custom", message: (error as Error).message });
      }
    }),
);

/** `--config` or `TOOLBUS_CONFIG`: the toolbus.toml to load; unset: `./toolbus.toml`, else the demo. */
export const ConfigPathSetting = z.preprocess(unsetIfBlank, z.string().optional());

/** `LOG_LEVEL`, any case, surrounding blanks ignored. */
export const LogLevelSetting = z.preprocess(
  (value) => (typeof value === "string" ? unsetIfBlank(value.trim().toLowerCase()) : value),
  z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(", ")}` }).default(DEFAULT_LOG_LEVEL),
);

/** The four settings by field; a service extends it with its own. */
export const ServiceSettingsSchema = z.object({
  natsUrl: NatsUrlSetting,
  prefix: PrefixSetting,
  configPath: ConfigPathSetting,
  logLevel: LogLevelSetting,
});
export type ServiceSettings = z.output<typeof ServiceSettingsSchema>;

/** The variable each field of `ServiceSettingsSchema` is read from, to name it in a problem. */
export const SERVICE_SETTINGS_ENV = {
  natsUrl: "NATS_URL",
  prefix: "TOOLBUS_PREFIX",
  configPath: "TOOLBUS_CONFIG",
  logLevel: "LOG_LEVEL",
} as const satisfies Record<keyof ServiceSettings, string>;

/**
 * `ServiceSettingsSchema`'s input from the environment; `configFlag` (the process's `--config`)
 * wins over `TOOLBUS_CONFIG`.
 */
export function serviceSettingsInput(
  env: Readonly<Record<string, string | undefined>>,
  configFlag?: string,
): Record<keyof ServiceSettings, string | undefined> {
  return {
    natsUrl: env.NATS_URL,
    prefix: env.TOOLBUS_PREFIX,
    configPath: configFlag ?? env.TOOLBUS_CONFIG,
    logLevel: env.LOG_LEVEL,
  };
}

/**
 * A service's command line, `strict`: an option it does not take is a `ConfigError` that names
 * the ones it does (`options` maps each to what it takes, e.g. `{ config: "<path>" }`).
 */
export function parseCommandLine<const O extends Readonly<Record<string, string | true>>>(
  argv: readonly string[],
  /** Each option's value, as shown in messages (`<path>`), or `true` for a flag that takes none. */
  options: O,
): { [K in keyof O]?: O[K] extends true ? boolean : string } {
  const spec = Object.fromEntries(
    Object.entries(options).map(([name, value]) => [name, { type: value === true ? "boolean" : "string" }]),
  ) as Record<string, { type: "string" | "boolean" }>;
  try {
    return parseArgs({ args: [...argv], options: spec, strict: true }).values as {
      [K in keyof O]?: O[K] extends true ? boolean : string;
    };
  } catch (error) {
    const accepted = Object.entries(options).map(([name, value]) =>
      value === true ? `--${name}` : `--${name} ${value}`,
    );
    throw new ConfigError([`command line: ${(error as Error).message} (accepted: ${accepted.join(", ")})`]);
  }
}

/**
 * How every service process reads its configuration (settings, command line, config file): a
 * problem the operator must fix stops it with the loader's message on stderr — every problem,
 * one per line — and exit 1, never a stack trace.
 */
export async function configOrExit<T>(load: () => T | Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}

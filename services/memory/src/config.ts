/**
 * The memory service's configuration, read once at start-up from the environment over the
 * `[memory]` table of toolbus.toml (whose defaults are the service's): one zod schema;
 * `loadMemoryConfig` reports every problem at once, then freezes.
 */
import {
  ConfigError,
  LogLevelSetting,
  loadConfig,
  NatsUrlSetting,
  PrefixSetting,
  parseCommandLine,
  type SettingsSource,
} from "@toolbus/bus";
import {
  DEFAULT_MEMORY_CONFIG,
  loadToolbusConfig,
  type MemoryConfig as MemoryTable,
  secretFromEnv,
} from "@toolbus/config";
import { z } from "zod";

/** An unset or empty variable takes the default. */
const unsetIfEmpty = (value: unknown) => (value === "" ? undefined : value);

/** Unset stays undefined: the `[memory]` table (or its defaults) fills it in. */
function integer(min: number, max: number, unit: string) {
  const error = `must be a whole number of ${unit} from ${min} to ${max}`;
  return z.preprocess(
    unsetIfEmpty,
    z.coerce.number({ error }).int({ error }).min(min, { error }).max(max, { error }).optional(),
  );
}

/**
 * Every environment variable the service reads, with its default; NATS_URL, TOOLBUS_PREFIX and
 * LOG_LEVEL are read as every service reads them (@toolbus/bus's service settings).
 */
export const MemoryEnvVariables = z.object({
  NATS_URL: NatsUrlSetting,
  DATABASE_URL: z.preprocess(
    unsetIfEmpty,
    z
      .string({
        error:
          "missing; set it to the Postgres URL, e.g. postgres://user:pass@host:5432/db (or DATABASE_URL_FILE to a file holding it)",
      })
      .regex(/^postgres(ql)?:\/\//, {
        error:
          "must be a postgres:// URL; put the schema in it with ?options=-c%20search_path%3D<schema> if needed",
      }),
  ),
  TOOLBUS_PREFIX: PrefixSetting,
  LOG_LEVEL: LogLevelSetting,
  /** The most messages one batch (one transaction) takes from what the stream has delivered. */
  MEMORY_BATCH_SIZE: integer(1, 10_000, "messages"),
  /** Deliveries of a message that keeps failing before it is parked. */
  MEMORY_MAX_DELIVERIES: integer(1, 1_000, "deliveries"),
  /** First delay before a failing message is redelivered; doubles per delivery, at most 60 s. */
  MEMORY_REDELIVERY_DELAY_MS: integer(10, 60_000, "ms"),
  /** How long the server waits for an ack before redelivering; a held batch is kept alive. */
  MEMORY_ACK_WAIT_MS: integer(1_000, 600_000, "ms"),
});

/** The environment over a `[memory]` table: a variable that is set wins over the file. */
export function memoryConfigSchema(table: Readonly<MemoryTable> = DEFAULT_MEMORY_CONFIG) {
  return MemoryEnvVariables.transform((env) => ({
    natsUrl: env.NATS_URL,
    databaseUrl: env.DATABASE_URL,
    prefix: env.TOOLBUS_PREFIX,
    logLevel: env.LOG_LEVEL,
    batchSize: env.MEMORY_BATCH_SIZE ?? table.batchSize,
    maxDeliveries: env.MEMORY_MAX_DELIVERIES ?? table.maxDeliveries,
    redeliveryDelayMs: env.MEMORY_REDELIVERY_DELAY_MS ?? table.redeliveryDelayMs,
    ackWaitMs: env.MEMORY_ACK_WAIT_MS ?? table.ackWaitMs,
  }));
}

export type MemoryConfig = z.output<ReturnType<typeof memoryConfigSchema>>;

/**
 * Throws `ConfigError` (from @toolbus/bus) listing every problem. `table` is the `[memory]`
 * table of the toolbus.toml in use, when there is one.
 */
export function loadMemoryConfig(
  env: Readonly<Record<string, string | undefined>>,
  table?: Readonly<MemoryTable>,
): Readonly<MemoryConfig> {
  // DATABASE_URL, or DATABASE_URL_FILE naming a file that holds it.
  const database = secretFromEnv(env, "DATABASE_URL");
  if (database.state === "invalid") throw new ConfigError([database.message]);
  const { DATABASE_URL_FILE: _file, ...rest } = env;
  return loadConfig(memoryConfigSchema(table), {
    ...rest,
    DATABASE_URL: database.state === "set" ? database.value : undefined,
  });
}

/**
 * The service's settings from its command line (`--config <path>`), its environment and the
 * `[memory]` table of the toolbus.toml in use. Throws `ConfigError` (or `ConfigFileError`).
 */
export async function readMemorySettings(source: SettingsSource): Promise<Readonly<MemoryConfig>> {
  const args = parseCommandLine(source.argv, { config: "<path>" });
  // Only the [memory] and [bus] tables matter here; with no file its defaults apply (the demo server is never started).
  const toolbus = await loadToolbusConfig({
    path: args.config,
    env: source.env,
    cwd: source.cwd,
    demoServer: () => ({ command: "server-everything", args: ["stdio"] }),
  });
  return loadMemoryConfig(source.env, toolbus.memory);
}

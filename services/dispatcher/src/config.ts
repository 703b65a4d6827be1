/** The dispatcher's own settings: environment and command line, validated once. */
import { parseArgs } from "node:util";
import { loadConfig } from "@toolbus/bus";
import { z } from "zod";

const DispatcherSettingsSchema = z.object({
  natsUrl: z.string().min(1).default("nats://127.0.0.1:4222"),
  prefix: z.string().min(1).default("toolbus"),
  configPath: z.string().min(1).optional(),
  logLevel: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
});
export type DispatcherSettings = z.output<typeof DispatcherSettingsSchema>;

export function loadDispatcherSettings(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): Readonly<DispatcherSettings> {
  const { values } = parseArgs({ args: [...argv], options: { config: { type: "string" } }, strict: true });
  return loadConfig(DispatcherSettingsSchema, {
    natsUrl: env.NATS_URL || undefined,
    prefix: env.TOOLBUS_PREFIX || undefined,
    configPath: values.config ?? (env.TOOLBUS_CONFIG || undefined),
    logLevel: env.LOG_LEVEL || undefined,
  });
}

/** The catalog service's own settings: environment and command line, validated once. */
import { parseArgs } from "node:util";
import { loadConfig } from "@toolbus/bus";
import { z } from "zod";

const CatalogSettingsSchema = z.object({
  natsUrl: z.string().min(1).default("nats://127.0.0.1:4222"),
  prefix: z.string().min(1).default("toolbus"),
  configPath: z.string().min(1).optional(),
  servers: z
    .array(z.string().regex(/^[a-zA-Z0-9_-]+$/, "server names match ^[a-zA-Z0-9_-]+$"))
    .min(1, "--servers needs at least one server name")
    .optional(),
  logLevel: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
});
export type CatalogSettings = z.output<typeof CatalogSettingsSchema>;

export function loadCatalogSettings(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): Readonly<CatalogSettings> {
  const { values } = parseArgs({
    args: [...argv],
    options: { config: { type: "string" }, servers: { type: "string" } },
    strict: true,
  });
  return loadConfig(CatalogSettingsSchema, {
    natsUrl: env.NATS_URL || undefined,
    prefix: env.TOOLBUS_PREFIX || undefined,
    configPath: values.config ?? (env.TOOLBUS_CONFIG || undefined),
    servers: values.servers
      ?.split(",")
      .map((s) => s.trim())
      .filter(Boolean),
    logLevel: env.LOG_LEVEL || undefined,
  });
}

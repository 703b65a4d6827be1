/** The catalog service's own settings: environment, command line and toolbus.toml, validated once. */
import { createRequire } from "node:module";
import {
  loadConfig,
  parseCommandLine,
  SERVICE_SETTINGS_ENV,
  ServiceSettingsSchema,
  type SettingsSource,
  serviceSettingsInput,
} from "@toolbus/bus";
import { loadToolbusConfig, type ToolbusConfig } from "@toolbus/config";
import { ServerNameSchema } from "@toolbus/protocol";
import { z } from "zod";

const CatalogSettingsSchema = ServiceSettingsSchema.extend({
  servers: z.array(ServerNameSchema).min(1, "--servers needs at least one server name").optional(),
  /** `--connectors-only`: run the servers' connectors, not the `catalog.*` subjects. */
  connectorsOnly: z.boolean(),
});
export type CatalogSettings = z.output<typeof CatalogSettingsSchema>;

export function loadCatalogSettings(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Readonly<CatalogSettings> {
  const values = parseCommandLine(argv, {
    config: "<path>",
    servers: "<name,…>",
    "connectors-only": true,
  });
  return loadConfig(
    CatalogSettingsSchema,
    {
      ...serviceSettingsInput(env, values.config),
      servers: values.servers
        ?.split(",")
        .map((s) => s.trim())
        .filter(Boolean),
      connectorsOnly: values["connectors-only"] === true,
    },
    SERVICE_SETTINGS_ENV,
  );
}

/** What the catalog starts with: its settings and the toolbus.toml they name. */
export interface CatalogServiceSettings extends CatalogSettings {
  config: ToolbusConfig;
}

/** Throws `ConfigError` (or `ConfigFileError`) naming every problem. */
export async function readCatalogSettings(source: SettingsSource): Promise<CatalogServiceSettings> {
  const settings = loadCatalogSettings(source.argv, source.env);
  const config = await loadToolbusConfig({
    ...(settings.configPath ? { path: settings.configPath } : {}),
    env: source.env,
    cwd: source.cwd,
    // With no config file, the demo: server-everything, which the catalog starts.
    demoServer: () => ({
      command: process.execPath,
      args: [
        createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/dist/index.js"),
        "stdio",
      ],
    }),
  });
  return { ...settings, config };
}

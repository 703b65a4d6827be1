/** The catalog service's own settings: environment and command line, validated once. */
import {
  loadConfig,
  parseCommandLine,
  SERVICE_SETTINGS_ENV,
  ServiceSettingsSchema,
  serviceSettingsInput,
} from "@toolbus/bus";
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
  env: NodeJS.ProcessEnv,
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

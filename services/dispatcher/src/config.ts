/** The dispatcher's own settings: environment and command line, validated once. */
import {
  loadConfig,
  parseCommandLine,
  SERVICE_SETTINGS_ENV,
  type ServiceSettings,
  ServiceSettingsSchema,
  serviceSettingsInput,
} from "@toolbus/bus";

export type DispatcherSettings = ServiceSettings;

export function loadDispatcherSettings(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): Readonly<DispatcherSettings> {
  const values = parseCommandLine(argv, { config: "<path>" });
  return loadConfig(ServiceSettingsSchema, serviceSettingsInput(env, values.config), SERVICE_SETTINGS_ENV);
}

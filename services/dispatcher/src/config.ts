/** The dispatcher's own settings: environment and command line, validated once. */
import { parseArgs } from "node:util";
import {
  loadConfig,
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
  const { values } = parseArgs({ args: [...argv], options: { config: { type: "string" } }, strict: true });
  return loadConfig(ServiceSettingsSchema, serviceSettingsInput(env, values.config), SERVICE_SETTINGS_ENV);
}

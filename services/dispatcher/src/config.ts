/** The dispatcher's own settings: environment, command line and toolbus.toml, validated once. */
import {
  loadConfig,
  parseCommandLine,
  SERVICE_SETTINGS_ENV,
  type ServiceSettings,
  ServiceSettingsSchema,
  type SettingsSource,
  serviceSettingsInput,
} from "@toolbus/bus";
import { loadToolbusConfig, type ToolbusConfig } from "@toolbus/config";

export type DispatcherSettings = ServiceSettings;

export function loadDispatcherSettings(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Readonly<DispatcherSettings> {
  const values = parseCommandLine(argv, { config: "<path>" });
  return loadConfig(ServiceSettingsSchema, serviceSettingsInput(env, values.config), SERVICE_SETTINGS_ENV);
}

/** What the dispatcher starts with: its settings and the toolbus.toml they name. */
export interface DispatcherServiceSettings extends DispatcherSettings {
  config: ToolbusConfig;
}

/** Throws `ConfigError` (or `ConfigFileError`) naming every problem. */
export async function readDispatcherSettings(source: SettingsSource): Promise<DispatcherServiceSettings> {
  const settings = loadDispatcherSettings(source.argv, source.env);
  // The dispatcher never starts servers: with no config file it only needs the demo's policy.
  const config = await loadToolbusConfig({
    ...(settings.configPath ? { path: settings.configPath } : {}),
    env: source.env,
    cwd: source.cwd,
    demoServer: () => ({ command: "server-everything", args: [] }),
  });
  return { ...settings, config };
}

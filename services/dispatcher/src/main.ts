/** Composition root of the dispatcher: settings → logger → telemetry → bus → service → shutdown. */
import {
  configOrExit,
  connectServiceBus,
  createLogger,
  exitWithStartupError,
  onShutdown,
  startTelemetry,
} from "@toolbus/bus";
import { loadToolbusConfig } from "@toolbus/config";
import { createSubjects, TOOLBUS_VERSION } from "@toolbus/protocol";
import { loadDispatcherSettings } from "./config.js";
import { SERVICE_NAME, startDispatcherService } from "./dispatcher-service.js";

const { settings, config } = await configOrExit(async () => {
  const settings = loadDispatcherSettings(process.argv.slice(2), process.env);
  // The dispatcher never starts servers: with no config file it only needs the demo's policy.
  const config = await loadToolbusConfig({
    ...(settings.configPath ? { path: settings.configPath } : {}),
    env: process.env,
    cwd: process.cwd(),
    demoServer: () => ({ command: "server-everything", args: [] }),
  });
  return { settings, config };
});
const logger = createLogger({ service: SERVICE_NAME, version: TOOLBUS_VERSION, level: settings.logLevel });
const stopTelemetry = await startTelemetry({ serviceName: `toolbus-${SERVICE_NAME}` });
const bus = await connectServiceBus({
  env: process.env,
  prefix: settings.prefix,
  role: "dispatcher",
  service: { name: SERVICE_NAME, version: TOOLBUS_VERSION, description: "The tool-call path" },
  logger,
}).catch((error: unknown) => exitWithStartupError(SERVICE_NAME, error, logger));
const service = await startDispatcherService({
  bus,
  subjects: createSubjects(settings.prefix),
  config,
  logger,
}).catch((error: unknown) => exitWithStartupError(SERVICE_NAME, error, logger));
onShutdown(bus, { logger, service, closers: [stopTelemetry] });
logger.info({ revision: service.catalog.revision }, "dispatcher ready");

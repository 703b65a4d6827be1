/** Composition root of the dispatcher: settings → logger → bus → catalog replica → endpoint → shutdown. */
import {
  connectServiceBus,
  createLogger,
  exitWithStartupError,
  onShutdown,
  startTelemetry,
} from "@toolbus/bus";
import { loadToolbusConfig } from "@toolbus/config";
import { createSubjects, TOOLBUS_VERSION } from "@toolbus/protocol";
import { loadDispatcherSettings } from "./config.js";
import { startDispatcherService } from "./dispatcher-service.js";

const settings = loadDispatcherSettings(process.argv.slice(2), process.env);
const logger = createLogger({ service: "dispatcher", version: TOOLBUS_VERSION, level: settings.logLevel });
const stopTelemetry = await startTelemetry({ serviceName: "toolbus-dispatcher" });
// The dispatcher never starts servers: with no config file it only needs the demo's policy.
const config = await loadToolbusConfig({
  ...(settings.configPath ? { path: settings.configPath } : {}),
  env: process.env,
  cwd: process.cwd(),
  demoServer: () => ({ command: "server-everything", args: [] }),
});
const bus = await connectServiceBus({
  env: process.env,
  prefix: settings.prefix,
  role: "dispatcher",
  service: { name: "dispatcher", version: TOOLBUS_VERSION, description: "The tool-call path" },
  logger,
}).catch((error: unknown) => exitWithStartupError("dispatcher", error));
const service = await startDispatcherService({
  bus,
  subjects: createSubjects(settings.prefix),
  config,
  logger,
}).catch((error: unknown) => exitWithStartupError("dispatcher", error));
onShutdown(bus, { logger, closers: [() => service.stop(), stopTelemetry] });
logger.info({ revision: service.catalog.revision }, "dispatcher ready");

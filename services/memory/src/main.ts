/** Composition root of the memory service: settings → logger → telemetry → bus → service → shutdown. */
import {
  configOrExit,
  connectServiceBus,
  createLogger,
  exitWithStartupError,
  onShutdown,
  parseCommandLine,
  startTelemetry,
} from "@toolbus/bus";
import { loadToolbusConfig } from "@toolbus/config";
import { TOOLBUS_VERSION } from "@toolbus/protocol";
import { loadMemoryConfig } from "./config.js";
import { SERVICE_NAME, startMemoryService } from "./memory-service.js";

const { config } = await configOrExit(async () => {
  const args = parseCommandLine(process.argv.slice(2), { config: "<path>" });
  // Only the [memory] and [bus] tables matter here; with no file its defaults apply (the demo server is never started).
  const toolbus = await loadToolbusConfig({
    path: args.config,
    env: process.env,
    cwd: process.cwd(),
    demoServer: () => ({ command: "server-everything", args: ["stdio"] }),
  });
  return { config: loadMemoryConfig(process.env, toolbus.memory) };
});
const logger = createLogger({ service: SERVICE_NAME, version: TOOLBUS_VERSION, level: config.logLevel });
const stopTelemetry = await startTelemetry({ serviceName: `toolbus-${SERVICE_NAME}` });
const bus = await connectServiceBus({
  env: process.env,
  prefix: config.prefix,
  role: "memory",
  service: {
    name: SERVICE_NAME,
    version: TOOLBUS_VERSION,
    description: "Memory citations: strip markup, count cited rollouts",
  },
  logger,
}).catch((error: unknown) => exitWithStartupError(SERVICE_NAME, error, logger));
const service = await startMemoryService({ bus, config, logger }).catch((error: unknown) =>
  exitWithStartupError(SERVICE_NAME, error, logger),
);
onShutdown(bus, { logger, service, closers: [stopTelemetry] });
logger.info("memory ready");

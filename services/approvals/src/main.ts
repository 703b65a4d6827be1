/**
 * Composition root of the approvals service (`node services/approvals/dist/main.js [--config <path>]
 * [--host <host>] [--port <port>]`): settings → logger → telemetry → bus → service → shutdown.
 */
import {
  configOrExit,
  connectServiceBus,
  createLogger,
  exitWithStartupError,
  onShutdown,
  startTelemetry,
} from "@toolbus/bus";
import { TOOLBUS_VERSION } from "@toolbus/protocol";
import { SERVICE_NAME, startApprovalsService } from "./approvals-service.js";
import { loadApprovalsConfig } from "./config.js";

const config = await configOrExit(() =>
  loadApprovalsConfig({ env: process.env, argv: process.argv.slice(2) }),
);
const logger = createLogger({ service: SERVICE_NAME, version: TOOLBUS_VERSION, level: config.logLevel });
const stopTelemetry = await startTelemetry({ serviceName: `toolbus-${SERVICE_NAME}` });
const bus = await connectServiceBus({
  env: process.env,
  prefix: config.prefix,
  role: "approvals",
  service: { name: SERVICE_NAME, version: TOOLBUS_VERSION, description: "approval policy, hooks and humans" },
  logger,
}).catch((error: unknown) => exitWithStartupError(SERVICE_NAME, error, logger));
const service = await startApprovalsService({ bus, config, logger }).catch((error: unknown) =>
  exitWithStartupError(SERVICE_NAME, error, logger),
);
onShutdown(bus, { logger, service, graceMs: config.shutdownGraceMs, closers: [stopTelemetry] });
logger.info("approvals ready");

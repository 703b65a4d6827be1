/**
 * `node services/approvals/dist/main.js [--config <path>] [--host <host>] [--port <port>]`:
 * configuration → logger → telemetry → the service → graceful shutdown on SIGTERM/SIGINT.
 */
import {
  createLogger,
  exitWithStartupError,
  natsAccessFromEnv,
  onShutdown,
  startTelemetry,
} from "@toolbus/bus";
import { TOOLBUS_VERSION } from "@toolbus/protocol";
import { loadApprovalsConfig } from "./config.js";
import { SERVICE_NAME, startApprovalsService } from "./service.js";

try {
  const config = await loadApprovalsConfig({ env: process.env, argv: process.argv.slice(2) });
  const logger = createLogger({ service: SERVICE_NAME, version: TOOLBUS_VERSION, level: config.logLevel });
  const stopTelemetry = await startTelemetry({ serviceName: `toolbus-${SERVICE_NAME}` });
  const natsAccess = natsAccessFromEnv(process.env, {
    prefix: config.prefix,
    role: "approvals",
  });
  const service = await startApprovalsService(config, { logger, natsAccess });
  onShutdown(
    {
      drain: (o) => service.drain(o),
      flushEvents: () => service.bus.flushEvents(),
      close: () => service.close(),
    },
    { logger, graceMs: config.shutdownGraceMs, closers: [stopTelemetry] },
  );
} catch (error) {
  exitWithStartupError(SERVICE_NAME, error);
}

/** Composition root of the gateway: settings → logger → telemetry → bus → service → shutdown. */
import {
  ConfigError,
  configOrExit,
  connectServiceBus,
  createLogger,
  exitWithStartupError,
  onShutdown,
  setLargeRepliesInFlightBytes,
  startTelemetry,
} from "@toolbus/bus";
import { loadToolbusConfig, resolveGatewayTokens } from "@toolbus/config";
import { createSubjects, TOOLBUS_VERSION } from "@toolbus/protocol";
import { loadGatewaySettings } from "./config.js";
import { SERVICE_NAME, startGatewayService } from "./gateway-service.js";

const { settings, config, principals } = await configOrExit(async () => {
  const settings = loadGatewaySettings(process.argv.slice(2), process.env);
  // The gateway starts no servers: with no config file it only needs the demo's [gateway] defaults.
  const config = await loadToolbusConfig({
    ...(settings.configPath ? { path: settings.configPath } : {}),
    env: process.env,
    cwd: process.cwd(),
    demoServer: () => ({ command: "server-everything", args: [] }),
  });
  const tokens = resolveGatewayTokens(config.gateway, process.env);
  if (!tokens.ok) throw new ConfigError([tokens.message]);
  return { settings, config, principals: tokens.principals };
});
const logger = createLogger({ service: SERVICE_NAME, version: TOOLBUS_VERSION, level: settings.logLevel });
// The gateway reads large replies (a tool's result, a catalog snapshot) within the same budget.
setLargeRepliesInFlightBytes(config.bus.largeRepliesInFlightBytes);
const stopTelemetry = await startTelemetry({ serviceName: `toolbus-${SERVICE_NAME}` });
const bus = await connectServiceBus({
  env: process.env,
  prefix: settings.prefix,
  role: "gateway",
  service: { name: SERVICE_NAME, version: TOOLBUS_VERSION, description: "The MCP edge" },
  logger,
}).catch((error: unknown) => exitWithStartupError(SERVICE_NAME, error, logger));
const service = await startGatewayService({
  bus,
  subjects: createSubjects(settings.prefix),
  logger,
  gateway: {
    ...config.gateway,
    ...(settings.port !== undefined ? { port: settings.port } : {}),
    ...(settings.host !== undefined ? { host: settings.host } : {}),
  },
  principals,
  limits: {
    sessionIdleTtlMs: settings.sessionIdleTtlSec * 1000,
    maxSessions: settings.maxSessions,
    bodyLimitBytes: settings.bodyLimitBytes,
    callTimeoutMs: config.approvals.timeoutMs + 6 * 60_000,
  },
  version: TOOLBUS_VERSION,
}).catch((error: unknown) => exitWithStartupError(SERVICE_NAME, error, logger));
onShutdown(bus, { logger, service, closers: [stopTelemetry] });
logger.info({ url: service.url }, "gateway ready");

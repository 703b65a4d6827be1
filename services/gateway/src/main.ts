/** Composition root of the gateway: settings → logger → config → bus → gateway → shutdown. */
import {
  connectServiceBus,
  createLogger,
  exitWithStartupError,
  onShutdown,
  startTelemetry,
} from "@toolbus/bus";
import { loadToolbusConfig, resolveGatewayTokens } from "@toolbus/config";
import { createSubjects, TOOLBUS_VERSION } from "@toolbus/protocol";
import { loadGatewaySettings } from "./config.js";
import { startGateway } from "./gateway-service.js";

const settings = loadGatewaySettings(process.argv.slice(2), process.env);
const logger = createLogger({ service: "gateway", version: TOOLBUS_VERSION, level: settings.logLevel });
const stopTelemetry = await startTelemetry({ serviceName: "toolbus-gateway" });
// The gateway starts no servers: with no config file it only needs the demo's [gateway] defaults.
const config = await loadToolbusConfig({
  ...(settings.configPath ? { path: settings.configPath } : {}),
  env: process.env,
  cwd: process.cwd(),
  demoServer: () => ({ command: "server-everything", args: [] }),
});
const tokens = resolveGatewayTokens(config.gateway, process.env);
if (!tokens.ok) {
  logger.fatal(tokens.message);
  process.exit(1);
}
const bus = await connectServiceBus({
  env: process.env,
  prefix: settings.prefix,
  role: "gateway",
  service: { name: "gateway", version: TOOLBUS_VERSION, description: "The MCP edge" },
  logger,
}).catch((error: unknown) => exitWithStartupError("gateway", error));
const gateway = await startGateway({
  bus,
  subjects: createSubjects(settings.prefix),
  logger,
  gateway: {
    ...config.gateway,
    ...(settings.port !== undefined ? { port: settings.port } : {}),
    ...(settings.host !== undefined ? { host: settings.host } : {}),
  },
  principals: tokens.principals,
  limits: {
    sessionIdleTtlMs: settings.sessionIdleTtlSec * 1000,
    maxSessions: settings.maxSessions,
    bodyLimitBytes: settings.bodyLimitBytes,
    callTimeoutMs: config.approvals.timeoutMs + 6 * 60_000,
  },
  version: TOOLBUS_VERSION,
}).catch((error: unknown) => exitWithStartupError("gateway", error));
onShutdown(bus, { logger, closers: [() => gateway.stop(), stopTelemetry] });

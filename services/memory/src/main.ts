/** The memory service process: config → telemetry → logger → service → shutdown on SIGTERM. */
import { parseArgs } from "node:util";
import {
  ConfigError,
  createLogger,
  exitWithStartupError,
  type NatsAccess,
  natsAccessFromEnv,
  onShutdown,
  startTelemetry,
} from "@toolbus/bus";
import { ConfigFileError, loadToolbusConfig, type StreamLimits } from "@toolbus/config";
import { TOOLBUS_VERSION } from "@toolbus/protocol";
import { loadMemoryConfig } from "./config.js";
import { SERVICE_NAME, startMemoryService } from "./memory-service.js";

function exitWith(message: string): never {
  process.stderr.write(`memory: ${message}\n`);
  process.exit(1);
}

let config: ReturnType<typeof loadMemoryConfig>;
let natsAccess: NatsAccess;
let streamLimits: StreamLimits;
let stopTelemetry: () => Promise<void>;
try {
  const { values } = parseArgs({ options: { config: { type: "string" } }, strict: true });
  // Only the [memory] and [bus] tables matter here; with no file its defaults apply (the demo server is never started).
  const toolbus = await loadToolbusConfig({
    path: values.config,
    env: process.env,
    cwd: process.cwd(),
    demoServer: () => ({ command: "server-everything", args: ["stdio"] }),
  });
  config = loadMemoryConfig(process.env, toolbus.memory);
  natsAccess = natsAccessFromEnv(process.env, { prefix: config.prefix, role: "memory" });
  streamLimits = toolbus.bus.memory;
  stopTelemetry = await startTelemetry({ serviceName: `toolbus-${SERVICE_NAME}` });
} catch (err) {
  if (err instanceof ConfigError || err instanceof ConfigFileError) exitWith(err.message);
  // parseArgs names the unknown option; say what is accepted.
  exitWith(`${err instanceof Error ? err.message : String(err)} (accepted: --config <path>)`);
}
const logger = createLogger({ service: SERVICE_NAME, version: TOOLBUS_VERSION, level: config.logLevel });
try {
  const service = await startMemoryService(config, { logger, natsAccess, streamLimits });
  onShutdown(service.bus, { logger, closers: [() => service.close(), stopTelemetry] });
  logger.info("memory ready");
} catch (err) {
  exitWithStartupError(SERVICE_NAME, err);
}

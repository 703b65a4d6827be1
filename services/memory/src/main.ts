/** The memory service process: config → logger → service → shutdown on SIGTERM. */
import { ConfigError, createLogger, onShutdown } from "@toolbus/bus";
import { loadMemoryConfig } from "./config.js";
import { SERVICE_NAME, SERVICE_VERSION, startMemoryService } from "./memory-service.js";

let config: ReturnType<typeof loadMemoryConfig>;
try {
  config = loadMemoryConfig(process.env);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`memory: ${err.message}\n`);
  process.exit(1);
}
const logger = createLogger({ service: SERVICE_NAME, version: SERVICE_VERSION, level: config.logLevel });
try {
  const service = await startMemoryService(config, { logger });
  onShutdown(service.bus, { logger, closers: [() => service.close()] });
} catch (err) {
  logger.fatal(
    { err },
    `the memory service could not start: ${err instanceof Error ? err.message : String(err)}`,
  );
  process.exit(1);
}

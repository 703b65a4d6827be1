/** Composition root of the catalog service: settings → logger → bus → connectors → shutdown. */
import { createRequire } from "node:module";
import {
  connectServiceBus,
  createLogger,
  exitWithStartupError,
  onShutdown,
  startTelemetry,
} from "@toolbus/bus";
import { loadToolbusConfig } from "@toolbus/config";
import { createSubjects, TOOLBUS_VERSION } from "@toolbus/protocol";
import { startCatalogService } from "./catalog-service.js";
import { loadCatalogSettings } from "./config.js";

// Bad settings or a bad config file stop start-up with every problem listed, without a stack trace.
const { settings, config } = await (async () => {
  try {
    const settings = loadCatalogSettings(process.argv.slice(2), process.env);
    const config = await loadToolbusConfig({
      ...(settings.configPath ? { path: settings.configPath } : {}),
      env: process.env,
      cwd: process.cwd(),
      demoServer: () => ({
        command: process.execPath,
        args: [
          createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/dist/index.js"),
          "stdio",
        ],
      }),
    });
    return { settings, config };
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(1);
  }
})();
const logger = createLogger({ service: "catalog", version: TOOLBUS_VERSION, level: settings.logLevel });
const stopTelemetry = await startTelemetry({ serviceName: "toolbus-catalog" });
const bus = await connectServiceBus({
  env: process.env,
  prefix: settings.prefix,
  role: "catalog",
  service: {
    name: "catalog",
    version: TOOLBUS_VERSION,
    description: "MCP server connections and the revisioned catalog",
  },
  logger,
}).catch((error: unknown) => exitWithStartupError("catalog", error));
const service = await startCatalogService({
  bus,
  subjects: createSubjects(settings.prefix),
  config,
  env: process.env,
  logger,
  ...(settings.servers ? { servers: settings.servers } : {}),
})
  .catch(async (error: unknown) => {
    // e.g. `--servers` naming a server the config does not have.
    logger.fatal({ err: error }, (error as Error).message);
    await bus.close();
    process.exit(1);
  })
  .catch((error: unknown) => exitWithStartupError("catalog", error));
let exitCode = 0;
const shutdown = onShutdown(bus, {
  logger,
  closers: [() => service.stop(), stopTelemetry],
  exit: (code) => process.exit(code || exitCode),
});

// A required server that did not come up stops the service, as it stops a Codex thread.
const requiredFailure = await service.requiredFailure();
if (requiredFailure) {
  logger.fatal(requiredFailure);
  exitCode = 1;
  await shutdown.shutdown(requiredFailure);
}
logger.info({ summary: await service.startup }, "catalog ready");

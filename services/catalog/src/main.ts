/** Composition root of the catalog service: settings → logger → telemetry → bus → service → shutdown. */
import { createRequire } from "node:module";
import {
  configOrExit,
  connectServiceBus,
  createLogger,
  exitWithStartupError,
  onShutdown,
  startTelemetry,
} from "@toolbus/bus";
import { loadToolbusConfig } from "@toolbus/config";
import { createSubjects, identityOf, TOOLBUS_VERSION } from "@toolbus/protocol";
import { SERVICE_NAME, startCatalogService } from "./catalog-service.js";
import { loadCatalogSettings } from "./config.js";

const { settings, config } = await configOrExit(async () => {
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
});
const logger = createLogger({ service: SERVICE_NAME, version: TOOLBUS_VERSION, level: settings.logLevel });
const stopTelemetry = await startTelemetry({ serviceName: `toolbus-${SERVICE_NAME}` });
// `--connectors-only` serves no `catalog.*`: it connects with no catalog identity (NATS_NKEY_FILE
// is not read), only with its servers' connector seeds (NATS_NKEY_DIR).
const bus = settings.connectorsOnly
  ? undefined
  : await connectServiceBus({
      env: process.env,
      prefix: settings.prefix,
      role: "catalog",
      service: {
        name: SERVICE_NAME,
        version: TOOLBUS_VERSION,
        description: "MCP server connections and the revisioned catalog",
      },
      logger,
    }).catch((error: unknown) => exitWithStartupError(SERVICE_NAME, error, logger));
// e.g. `--servers` naming a server the config does not have.
const service = await startCatalogService({
  ...(bus ? { bus } : {}),
  // Each server's connector on its own identity (`connector-<server>.nk` beside NATS_NKEY_FILE).
  connectorBus: (server) =>
    connectServiceBus({
      env: process.env,
      prefix: settings.prefix,
      role: identityOf("connector", server),
      service: { name: `connector-${server}`, version: TOOLBUS_VERSION, description: `MCP server ${server}` },
      logger: logger.child({ server }),
    }),
  front: !settings.connectorsOnly,
  subjects: createSubjects(settings.prefix),
  config,
  env: process.env,
  logger,
  ...(settings.servers ? { servers: settings.servers } : {}),
}).catch((error: unknown) => exitWithStartupError(SERVICE_NAME, error, logger));
let exitCode = 0;
const shutdown = onShutdown(bus, {
  logger,
  service,
  closers: [stopTelemetry],
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

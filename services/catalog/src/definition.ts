/**
 * The catalog as one definition (@toolbus/bus `ServiceDefinition`): what its main.ts runs as a
 * process and the all-in-one starts in-process.
 */
import { projectStateDir, type ServiceDefinition } from "@toolbus/bus";
import { createSubjects, identityOf } from "@toolbus/protocol";
import { type CatalogService, SERVICE_NAME, startCatalogService } from "./catalog-service.js";
import { type CatalogServiceSettings, readCatalogSettings } from "./config.js";

export const catalogDefinition: ServiceDefinition<CatalogServiceSettings, CatalogService> = {
  role: SERVICE_NAME,
  description: "MCP server connections and the revisioned catalog",
  readSettings: readCatalogSettings,
  start: async ({ settings, logger, env, cwd, bus, connect }) =>
    startCatalogService({
      // `--connectors-only` serves no `catalog.*`: it connects with no catalog identity
      // (NATS_NKEY_FILE is not read), only with its servers' connector seeds (NATS_NKEY_DIR).
      ...(settings.connectorsOnly ? {} : { bus: await bus() }),
      // Each server's connector on its own identity (`connector-<server>.nk` beside NATS_NKEY_FILE).
      connectorBus: (server) =>
        connect(identityOf("connector", server), `MCP server ${server}`, logger.child({ server })),
      front: !settings.connectorsOnly,
      subjects: createSubjects(settings.prefix),
      config: settings.config,
      env,
      logger,
      stateDir: projectStateDir(cwd, env),
      // e.g. `--servers` naming a server the config does not have fails the start.
      ...(settings.servers ? { servers: settings.servers } : {}),
    }),
  ready: async (service, logger) => {
    // A required server that did not come up stops the service, as it stops a Codex thread (§2.5).
    const requiredFailure = await service.requiredFailure();
    if (requiredFailure !== undefined) return requiredFailure;
    logger.info({ summary: await service.startup }, "catalog ready");
    return undefined;
  },
};

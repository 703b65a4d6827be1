/**
 * The dispatcher as one definition (@toolbus/bus `ServiceDefinition`): what its main.ts runs as
 * a process and the all-in-one starts in-process.
 */
import type { ServiceDefinition } from "@toolbus/bus";
import { createSubjects } from "@toolbus/protocol";
import { type DispatcherServiceSettings, readDispatcherSettings } from "./config.js";
import { type DispatcherService, SERVICE_NAME, startDispatcherService } from "./dispatcher-service.js";

export const dispatcherDefinition: ServiceDefinition<DispatcherServiceSettings, DispatcherService> = {
  role: SERVICE_NAME,
  description: "The tool-call path",
  readSettings: readDispatcherSettings,
  start: async ({ settings, logger, bus }) =>
    startDispatcherService({
      bus: await bus(),
      subjects: createSubjects(settings.prefix),
      config: settings.config,
      logger,
    }),
  ready: async (service, logger) => {
    logger.info({ revision: service.catalog.revision }, "dispatcher ready");
    return undefined;
  },
};

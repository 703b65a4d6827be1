/**
 * The memory service as one definition (@toolbus/bus `ServiceDefinition`): what its main.ts runs
 * as a process and the all-in-one starts in-process.
 */
import type { ServiceDefinition } from "@toolbus/bus";
import { type MemoryConfig, readMemorySettings } from "./config.js";
import { type MemoryService, SERVICE_NAME, startMemoryService } from "./memory-service.js";

export const memoryDefinition: ServiceDefinition<Readonly<MemoryConfig>, MemoryService> = {
  role: SERVICE_NAME,
  description: "Memory citations: strip markup, count cited rollouts",
  readSettings: readMemorySettings,
  start: async ({ settings, logger, bus }) =>
    startMemoryService({ bus: await bus(), config: settings, logger }),
  ready: async (_, logger) => {
    logger.info("memory ready");
    return undefined;
  },
};

/**
 * The approvals service as one definition (@toolbus/bus `ServiceDefinition`): what its main.ts
 * runs as a process and the all-in-one starts in-process.
 */
import type { ServiceDefinition } from "@toolbus/bus";
import { type ApprovalsService, SERVICE_NAME, startApprovalsService } from "./approvals-service.js";
import { type ApprovalsServiceConfig, loadApprovalsConfig } from "./config.js";

export const approvalsDefinition: ServiceDefinition<Readonly<ApprovalsServiceConfig>, ApprovalsService> = {
  role: SERVICE_NAME,
  description: "Approval policy, hooks and humans",
  readSettings: loadApprovalsConfig,
  start: async ({ settings, logger, bus }) =>
    startApprovalsService({ bus: await bus(), config: settings, logger }),
  ready: async (_, logger) => {
    logger.info("approvals ready");
    return undefined;
  },
  // Decides waiting for a human are answered and in-flight work finishes within it.
  graceMs: (settings) => settings.shutdownGraceMs,
};

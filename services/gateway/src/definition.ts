/**
 * The gateway as one definition (@toolbus/bus `ServiceDefinition`): what its main.ts runs as a
 * process and the all-in-one starts in-process, there with more routes on its port.
 */
import { type Bus, type Logger, type ServiceDefinition, setLargeRepliesInFlightBytes } from "@toolbus/bus";
import { createSubjects, type Subjects, TOOLBUS_VERSION } from "@toolbus/protocol";
import type { FastifyPluginAsync } from "fastify";
import { type GatewayServiceSettings, readGatewaySettings } from "./config.js";
import { toolScopesOf } from "./core/views.js";
import { type GatewayService, SERVICE_NAME, startGatewayService } from "./gateway-service.js";

/** What a process that runs the gateway in-process may add. */
export interface GatewayHostOptions {
  /** More routes on the gateway's port (the all-in-one: the approvals inbox and its API). */
  plugins?(on: { bus: Bus; subjects: Subjects; logger: Logger }): readonly FastifyPluginAsync[];
}

export const gatewayDefinition: ServiceDefinition<
  GatewayServiceSettings,
  GatewayService,
  GatewayHostOptions
> = {
  role: SERVICE_NAME,
  description: "The MCP edge, REST and the console",
  readSettings: readGatewaySettings,
  start: async ({ settings, logger, bus }, host) => {
    // The gateway reads large replies (a tool's result, a catalog snapshot) within the same budget.
    setLargeRepliesInFlightBytes(settings.config.bus.largeRepliesInFlightBytes);
    const own = await bus();
    const subjects = createSubjects(settings.prefix);
    return startGatewayService({
      bus: own,
      subjects,
      logger,
      gateway: settings.edge,
      principals: settings.principals,
      limits: settings.limits,
      selfApprove: settings.config.approvals.selfApprove,
      views: Object.values(settings.config.views),
      toolScopes: toolScopesOf(settings.config.mcpServers),
      version: TOOLBUS_VERSION,
      ...(host?.plugins ? { plugins: host.plugins({ bus: own, subjects, logger }) } : {}),
    });
  },
  ready: async (service, logger) => {
    logger.info({ url: service.url }, "gateway ready");
    return undefined;
  },
};

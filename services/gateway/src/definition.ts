/**
 * The gateway as one definition (@toolbus/bus `ServiceDefinition`): what its main.ts runs as a
 * process and the all-in-one starts in-process, there with more routes on its port.
 */

import { setTimeout as sleep } from "node:timers/promises";
import { type Bus, type Logger, type ServiceDefinition, setLargeRepliesInFlightBytes } from "@toolbus/bus";
import { createSubjects, type Subjects, TOOLBUS_VERSION } from "@toolbus/protocol";
import type { FastifyPluginAsync } from "fastify";
import { type GatewayServiceSettings, readGatewaySettings } from "./config.js";
import { toolScopesOf } from "./core/views.js";
import { type GatewayService, SERVICE_NAME, startGatewayService } from "./gateway-service.js";

/** How long start-up waits for the gateway's first copy of the catalog, and how often it looks. */
const CATALOG_LOAD_WAIT_MS = 30_000;
const CATALOG_LOAD_POLL_MS = 50;

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
  // Ready once it serves the catalog: a client that connects when start-up names the MCP endpoint
  // lists tools, instead of being told the catalog is not loaded yet. A catalog that takes longer
  // is waited for by each request (briefly), so start-up goes on after a warning.
  ready: async (service, logger) => {
    const deadline = Date.now() + CATALOG_LOAD_WAIT_MS;
    while (!service.ready() && Date.now() < deadline) await sleep(CATALOG_LOAD_POLL_MS);
    if (service.ready()) logger.info({ url: service.url }, "gateway ready");
    else {
      logger.warn(
        { url: service.url },
        `the gateway has not loaded the catalog after ${CATALOG_LOAD_WAIT_MS / 1000} s; MCP clients are refused until it has (is the catalog service running?)`,
      );
    }
    return undefined;
  },
};

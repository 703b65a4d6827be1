/** @toolbus/gateway: the MCP edge, to run in-process (tests, the all-in-one process). */

export {
  RESOURCE_ROUTING_LIMITS,
  type ResourceRoutingLimits,
  resourceDirectory,
  routeResource,
} from "./core/resource-routing.js";
export { type GatewayHostOptions, gatewayDefinition } from "./definition.js";
export {
  DEFAULT_GATEWAY_LIMITS,
  type GatewayLimits,
  type GatewayService,
  type GatewayServiceDeps,
  startGatewayService,
} from "./gateway-service.js";
export { GATEWAY_METRICS } from "./metrics.js";

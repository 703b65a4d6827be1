/** @toolbus/gateway: the MCP edge, to run in-process (tests, the all-in-one process). */

export {
  buildExposedNames,
  type ExposedNameTable,
  type ExposedTool,
  type NamingMode,
} from "./core/exposed-names.js";
export {
  DEFAULT_GATEWAY_LIMITS,
  type GatewayDeps,
  type GatewayLimits,
  type RunningGateway,
  startGateway,
} from "./gateway-service.js";
export { GATEWAY_METRICS } from "./metrics.js";

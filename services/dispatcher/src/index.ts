/** @toolbus/dispatcher: the tool-call path as a service others can start in-process (all-in-one, tests). */
// dispatch.history's subject and schemas are the protocol's (`dispatchHistory`, `DispatchHistoryRequestSchema`).
export { replayThreadItems } from "./adapters/nats/call-history.js";
export { dispatcherDefinition } from "./definition.js";
export {
  type DispatcherService,
  type DispatcherServiceDeps,
  startDispatcherService,
} from "./dispatcher-service.js";
export { DISPATCHER_METRICS } from "./metrics.js";

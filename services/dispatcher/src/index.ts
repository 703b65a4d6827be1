/** @toolbus/dispatcher: the tool-call path as a service others can start in-process (all-in-one, tests). */
export {
  type DispatchHistoryRequest,
  DispatchHistoryRequestSchema,
  type DispatchHistoryResult,
  DispatchHistoryResultSchema,
  dispatchHistorySubject,
  replayThreadItems,
} from "./adapters/nats/call-history.js";
export {
  type DispatcherService,
  type DispatcherServiceDeps,
  startDispatcherService,
} from "./dispatcher-service.js";
export { DISPATCHER_METRICS } from "./metrics.js";

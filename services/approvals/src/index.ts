/** @toolbus/approvals: the approvals core (shared with the dispatcher), the service, and its HTTP routes. */

export { type ApprovalsHttpDeps, buildApprovalsHttp } from "./adapters/http/approvals-http.js";
export { approvalsHttpOverBus } from "./adapters/http/approvals-over-bus.js";
export { type InboxEvent, subscribeInboxEvents } from "./adapters/nats/approval-events.js";
export {
  type ApprovalsServiceConfig,
  type ApprovalsServiceConfigInput,
  ApprovalsServiceConfigSchema,
  approvalModeOf,
  type LoadOptions,
  loadApprovalsConfig,
  type ServerModes,
} from "./config.js";
export * from "./core/index.js";
export { APPROVALS_METRICS, decisionCounter } from "./metrics.js";
export {
  type ApprovalsService,
  type ApprovalsServiceOptions,
  SERVICE_NAME,
  startApprovalsService,
} from "./service.js";

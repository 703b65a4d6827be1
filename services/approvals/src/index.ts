/** @toolbus/approvals: the approvals service, its configuration and its HTTP routes (the policy itself: @toolbus/policy). */

export { type ApprovalsHttpDeps, buildApprovalsHttp } from "./adapters/http/approvals-http.js";
export { approvalsHttpOverBus } from "./adapters/http/approvals-over-bus.js";
export { type InboxEvent, subscribeInboxEvents } from "./adapters/nats/approval-events.js";
export {
  type ApprovalsService,
  type ApprovalsServiceDeps,
  SERVICE_NAME,
  startApprovalsService,
} from "./approvals-service.js";
export {
  type ApprovalsServiceConfig,
  type ApprovalsServiceConfigInput,
  ApprovalsServiceConfigSchema,
  type LoadOptions,
  loadApprovalsConfig,
} from "./config.js";
export { approvalsDefinition } from "./definition.js";
export { APPROVALS_METRICS, decisionCounter } from "./metrics.js";

export { freePort } from "@toolbus/config";
export { approvalPolicyOf, publishApprovalPolicy } from "./approval-policy.js";
export { chromiumPath } from "./chromium.js";
export { eventually } from "./eventually.js";
export { flushTelemetry } from "./flush-telemetry.js";
export {
  type Infra,
  startInfra,
  startThrowawayNats,
  startThrowawayPostgres,
  type ThrowawayNats,
  type ThrowawayNatsOptions,
  type ThrowawayPostgres,
} from "./infra.js";
export { cleanupJetStream, isolation, type PgSchema, withPgSchema } from "./isolation.js";
export { cancellationsIn, elicitationsIn, receivedMessages } from "./mcp-received.js";
export {
  type NatsServerBinary,
  type NatsServerProcess,
  natsServerBinaries,
  startNatsServer,
} from "./nats-server.js";
export {
  type MetricPoint,
  metricPointsFromOtlpJson,
  type OtlpMetricsRequest,
  type OtlpReceiver,
  type OtlpTracesRequest,
  type ReceivedRequest,
  type ReceivedSpan,
  spansFromOtlpJson,
  startOtlpReceiver,
} from "./otlp-receiver.js";
export { provisionPrefix } from "./provision.js";
export { type TomlValue, toolbusToml } from "./toolbus-toml.js";

/** @toolbus/bus: the runtime every toolbus service uses. Import from here only. */
export {
  type Bus,
  type ConnectBusOptions,
  connectBus,
  connectServiceBus,
  type DrainOptions,
  natsConnectionOptions,
  type ServiceIdentity,
} from "./bus.js";
export { followCancellations, publishCancellation } from "./call-cancellations.js";
export {
  type Answered,
  CallLedger,
  type CallLedgerOptions,
  type CallLedgerPort,
  type Claim,
  callKey,
  instanceAlive,
  type WaitOutcome,
  type WatchedRecord,
  watchedRecord,
  watchedRequest,
} from "./call-ledger.js";
export { ConfigError, loadConfig } from "./config.js";
export { AttributeCache } from "./core/attribute-cache.js";
export { DEFAULT_EVENT_DELIVERY, type EventDeliveryLimits } from "./core/backoff.js";
export {
  CallCancellations,
  type CallCancellationsOptions,
  cancelReason,
  type TrackedCall,
} from "./core/call-cancellations.js";
export type { CallRecord, Finding } from "./core/call-record.js";
export {
  LARGE_REPLY_HEADER,
  parseStoredReply,
  recipientOf,
  type StoredReply,
} from "./core/large-reply.js";
export { maskUrl } from "./core/mask-url.js";
export {
  DURATION_BUCKETS_S,
  type InstrumentKind,
  type MetricSpec,
} from "./core/metric-specs.js";
export { type AuthUser, renderAuthConf, TOOLBUS_ACCOUNT } from "./core/nats-auth-conf.js";
export { type StreamLimits, streamLimitFields } from "./core/stream-limits.js";
export type { EventLossReason, PublishEventOptions } from "./events.js";
export {
  type EnsureStreamConfig,
  EVENT_DUPLICATE_WINDOW_MS,
  ensureEventsStream,
  ensureKv,
  ensureLargeRepliesStream,
  ensureStream,
} from "./jetstream.js";
export { followKv, type KvChange, type KvFollowing } from "./kv-follow.js";
export { type LargeReplyOptions, largeRepliesStreamConfig, largeReplyOptions } from "./large-replies.js";
export {
  LARGE_REPLIES_BUDGET,
  LargeRepliesBudget,
  LargeRepliesBudgetError,
  setLargeRepliesInFlightBytes,
} from "./large-reply-budget.js";
export { createLogger, type Logger, type LoggerOptions } from "./logger.js";
export {
  type AttributesOf,
  BUS_METRICS,
  type BusInstruments,
  defineMetrics,
  type InstrumentOf,
  type Instruments,
  type MetricSet,
  observeGauge,
  secondsSince,
} from "./metrics.js";
export {
  authConfOf,
  DEFAULT_NATS_URL,
  exitWithStartupError,
  hasCredentials,
  localNatsPaths,
  type NatsAccess,
  type NatsIdentities,
  type NatsTlsFiles,
  natsAccessFromEnv,
  natsServers,
  readSeedFile,
  runningLocalNats,
  seedFileOf,
  writeNatsIdentities,
} from "./nats-identity.js";
export { DEFAULT_REQUEST_TIMEOUT_MS, isOverMaxPayload, type RequestOptions } from "./request.js";
export {
  type EndpointSpec,
  type Handler,
  type HandlerContext,
  type SentReply,
  StoredReplyAnswer,
} from "./serve.js";
export {
  configOrExit,
  LOG_LEVELS,
  LogLevelSetting,
  NatsUrlSetting,
  PrefixSetting,
  parseCommandLine,
  SERVICE_SETTINGS_ENV,
  type ServiceSettings,
  ServiceSettingsSchema,
  serviceSettingsInput,
} from "./service-settings.js";
export { onShutdown, type RunningService, type ShutdownHandle, type ShutdownOptions } from "./shutdown.js";
export { startTelemetry, type TelemetryOptions } from "./telemetry.js";
export {
  extractTraceContext,
  injectTraceContext,
  markFailed,
  type SpanOptions,
  tracer,
  withSpan,
} from "./tracing.js";

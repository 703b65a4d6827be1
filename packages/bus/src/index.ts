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
export { CatalogFollower, type CatalogFollowerOptions } from "./catalog-follower.js";
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
  READER_HEADER,
  readerOf,
  type StoredReply,
} from "./core/large-reply.js";
export { maskUrl } from "./core/mask-url.js";
export {
  DURATION_BUCKETS_S,
  type InstrumentKind,
  type MetricSpec,
} from "./core/metric-specs.js";
export { renderAuthConf } from "./core/nats-auth-conf.js";
export { type StreamLimits, streamLimitFields } from "./core/stream-limits.js";
export type { EventLossReason, PublishEventOptions } from "./events.js";
export { answerWithin, HOLD_GRACE_MS, heldCall, NoAnswerYet } from "./held-call.js";
export { followKv, type KvChange, type KvFollowing } from "./kv-follow.js";
export { type LargeReplyOptions, largeReplyOptions } from "./large-replies.js";
export {
  LARGE_REPLIES_BUDGET,
  LargeRepliesBudget,
  LargeRepliesBudgetError,
  setLargeRepliesInFlightBytes,
} from "./large-reply-budget.js";
export { ensurePrivateDir, projectStateDir, writePrivateFile } from "./local-state.js";
export { chooseLogFormat, LOG_FORMATS, type LogFormat } from "./log-format.js";
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
  authConfFor,
  authConfOf,
  DEFAULT_NATS_URL,
  exitWithStartupError,
  type GeneratedNatsIdentities,
  generateNatsIdentities,
  hasCredentials,
  legacyLocalNatsFiles,
  localNatsPaths,
  localNatsStateFiles,
  type NatsAccess,
  type NatsIdentities,
  type NatsTlsFiles,
  natsAccessFromEnv,
  natsServers,
  newSeed,
  publicKeyOf,
  readSeedFile,
  runningLocalNats,
  seedFileOf,
  writeNatsIdentities,
} from "./nats-identity.js";
export {
  type Asset,
  AssetsNotProvisioned,
  CALL_RECORD_TTL_MS,
  durableConsumers,
  EVENT_DUPLICATE_WINDOW_MS,
  EXECUTION_RECORD_TTL_MS,
  jetStreamAssets,
  kvWriteSubject,
  MEMORY_DUPLICATE_WINDOW_MS,
  ProvisionError,
  type ProvisionReport,
  type ProvisionSettings,
  provision,
  provisionBus,
  RESOURCE_ORIGIN_TTL_MS,
  streamContract,
  verifyAssets,
} from "./provision.js";
export {
  DEFAULT_REQUEST_TIMEOUT_MS,
  isOverMaxPayload,
  permissionViolation,
  type RequestOptions,
} from "./request.js";
export { type RunOnceOptions, runOnce } from "./run-once.js";
export {
  type EndpointSpec,
  type Handler,
  type HandlerContext,
  type SentReply,
  StoredReplyAnswer,
} from "./serve.js";
export {
  type BusConnector,
  type CommonSettings,
  runServiceProcess,
  type ServiceContext,
  type ServiceDefinition,
  type SettingsSource,
  type StartedService,
  startService,
} from "./service-runner.js";
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
export {
  ignoreBrokenPipes,
  onStopSignals,
  SAME_STOP_WINDOW_MS,
  type StopSignalHandlers,
  type StopSignalOptions,
} from "./stop-signals.js";
export { startTelemetry, type TelemetryOptions } from "./telemetry.js";
export {
  extractTraceContext,
  injectTraceContext,
  markFailed,
  type SpanOptions,
  tracer,
  withSpan,
} from "./tracing.js";

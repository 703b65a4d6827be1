/**
 * The JetStream assets of a toolbus bus — every KV bucket, stream and durable consumer — created
 * and brought in line by one provisioning step with its own identity (`toolbus provision`,
 * `pnpm start`, the cluster harness, a Job or a one-shot container), before any service runs.
 * Running services create nothing: each checks at start that the streams it uses have the
 * configuration the contract gives them (`verifyAssets`) and refuses to run, naming the
 * difference, when they do not.
 */
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  JetStreamApiError,
  type JetStreamManager,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type StreamConfig,
} from "@nats-io/jetstream";
import { connect, nanos } from "@nats-io/transport-node";
import {
  BUCKETS,
  bucketName,
  bucketStream,
  type Identity,
  identityName,
  identityUse,
  JS_API,
  STREAMS,
  type Subjects,
  withPrefix,
} from "@toolbus/protocol";
import { natsConnectionOptions } from "./bus.js";
import {
  type ActualStreamConfig,
  type ConsumerContract,
  consumerDifferences,
  contractDifferences,
  type StreamContract,
} from "./core/asset-contract.js";
import { DEFAULT_EVENT_DELIVERY, eventDuplicateWindowMs } from "./core/backoff.js";
import type { StreamLimits } from "./core/stream-limits.js";
import { EVENT_ACK_TIMEOUT_MS } from "./events.js";
import type { NatsAccess } from "./nats-identity.js";
import { permissionViolation } from "./request.js";

/** How long the dispatchers remember a call (`<prefix>_calls`): a retry within it is answered from the record. */
export const CALL_RECORD_TTL_MS = 30 * 60 * 1000;
/** How long the connectors remember a tool execution and its outcome (`<prefix>_executions`). */
export const EXECUTION_RECORD_TTL_MS = 30 * 60 * 1000;
/** How long resource origins are remembered for `originCallId` checks. */
export const RESOURCE_ORIGIN_TTL_MS = 24 * 60 * 60 * 1000;
/** How long JetStream remembers an event's msgID: every retry of one event falls inside it. */
export const EVENT_DUPLICATE_WINDOW_MS = eventDuplicateWindowMs(DEFAULT_EVENT_DELIVERY, EVENT_ACK_TIMEOUT_MS);
/** How long the memory stream remembers a messageId published as the msgID. */
export const MEMORY_DUPLICATE_WINDOW_MS = 2 * 60 * 1000;
/** JetStream's default duplicate window, which must not exceed a stream's max age. */
const DEFAULT_DUPLICATE_WINDOW_MS = 2 * 60 * 1000;

/** What the provisioner sizes the assets by (the `[bus]`, `[gateway]` and `[memory]` tables). */
export interface ProvisionSettings {
  /** JetStream nodes that keep each asset (`TOOLBUS_JS_REPLICAS`). */
  replicas: number;
  events: StreamLimits;
  memory: StreamLimits;
  largeReplies: StreamLimits;
  /** The gateway's MCP session records expire after this long unused. */
  gatewaySessionTtlMs: number;
  /** The memory service's durable consumer: how long a delivery waits for its ack, how many may. */
  memoryConsumer: { ackWaitMs: number; maxAckPending: number };
}

/** One asset's stream: the full configuration the provisioner gives it. */
export interface Asset {
  readonly config: StreamConfig;
  readonly contract: StreamContract;
}

const MS = (ms: number) => nanos(ms);

function kvStream(
  bucket: string,
  options: { ttlMs?: number; maxBytes?: number },
  replicas: number,
): StreamConfig {
  const ttl = options.ttlMs ?? 0;
  return {
    name: bucketStream(bucket),
    subjects: [`$KV.${bucket}.>`],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.New,
    max_msgs_per_subject: 1,
    max_age: MS(ttl),
    max_bytes: options.maxBytes ?? -1,
    max_msg_size: -1,
    max_msgs: -1,
    max_consumers: -1,
    allow_rollup_hdrs: true,
    allow_direct: true,
    deny_delete: true,
    deny_purge: false,
    duplicate_window: MS(ttl > 0 ? Math.min(ttl, DEFAULT_DUPLICATE_WINDOW_MS) : DEFAULT_DUPLICATE_WINDOW_MS),
    num_replicas: replicas,
  } as StreamConfig;
}

function plainStream(
  names: { name: string; subjects: readonly string[] },
  limits: StreamLimits,
  duplicateWindowMs: number,
  options: { allowDirect: boolean; discard: DiscardPolicy },
  replicas: number,
): StreamConfig {
  return {
    name: names.name,
    subjects: [...names.subjects],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: options.discard,
    max_age: MS(limits.maxAgeMs),
    max_bytes: limits.maxBytes,
    max_msgs: -1,
    max_msg_size: -1,
    max_msgs_per_subject: -1,
    max_consumers: -1,
    allow_direct: options.allowDirect,
    allow_rollup_hdrs: false,
    deny_delete: true,
    deny_purge: true,
    duplicate_window: MS(Math.min(duplicateWindowMs, limits.maxAgeMs)),
    num_replicas: replicas,
  } as StreamConfig;
}

/** The bucket options of each asset, by its name in the tables (`toolbus_calls`). */
function bucketOptions(bucket: string, settings: ProvisionSettings): { ttlMs?: number; maxBytes?: number } {
  switch (bucket) {
    case "toolbus_calls":
      return { ttlMs: CALL_RECORD_TTL_MS };
    case "toolbus_executions":
      return { ttlMs: EXECUTION_RECORD_TTL_MS };
    case "toolbus_resource_origins":
      return { ttlMs: RESOURCE_ORIGIN_TTL_MS };
    case "toolbus_gateway_sessions":
      return { ttlMs: settings.gatewaySessionTtlMs };
    case "toolbus_call_history":
      // An entry is ~100 bytes against up to 1 MiB per end event: a sixteenth of the stream is ample.
      return {
        ttlMs: settings.events.maxAgeMs,
        maxBytes: Math.max(1024 * 1024, Math.floor(settings.events.maxBytes / 16)),
      };
    default:
      return {};
  }
}

/** Every asset of a bus under `subjects`' prefix, as the provisioner creates it. */
export function jetStreamAssets(subjects: Subjects, settings: ProvisionSettings): Asset[] {
  const r = settings.replicas;
  const streams: StreamConfig[] = [
    ...BUCKETS.map((spec) =>
      kvStream(bucketName(spec.bucket, subjects.prefix), bucketOptions(spec.bucket, settings), r),
    ),
    plainStream(
      subjects.streams.events,
      settings.events,
      EVENT_DUPLICATE_WINDOW_MS,
      { allowDirect: false, discard: DiscardPolicy.Old },
      r,
    ),
    plainStream(
      subjects.streams.memory,
      settings.memory,
      MEMORY_DUPLICATE_WINDOW_MS,
      { allowDirect: false, discard: DiscardPolicy.Old },
      r,
    ),
    // Full, it refuses a new reply (clearly, `payload_too_large`) rather than drop one in flight.
    plainStream(
      subjects.streams.large,
      settings.largeReplies,
      DEFAULT_DUPLICATE_WINDOW_MS,
      { allowDirect: true, discard: DiscardPolicy.New },
      r,
    ),
  ];
  return streams.map((config) => Object.freeze({ config, contract: contractOf(config) }));
}

function contractOf(config: StreamConfig): StreamContract {
  return Object.freeze({
    name: config.name,
    subjects: Object.freeze([...(config.subjects ?? [])]),
    deny_delete: config.deny_delete ?? false,
    deny_purge: config.deny_purge ?? false,
    allow_direct: config.allow_direct ?? false,
  });
}

/**
 * The contract of one asset stream under `subjects`' prefix (its limits do not matter here), or
 * undefined for a stream that is no toolbus asset.
 */
export function streamContract(subjects: Subjects, stream: string): StreamContract | undefined {
  const limits = { maxAgeMs: 60_000, maxBytes: 1 };
  const settings: ProvisionSettings = {
    replicas: 1,
    events: limits,
    memory: limits,
    largeReplies: limits,
    gatewaySessionTtlMs: 60_000,
    memoryConsumer: { ackWaitMs: 1_000, maxAckPending: 1 },
  };
  return jetStreamAssets(subjects, settings).find((asset) => asset.config.name === stream)?.contract;
}

/** The durable consumers the provisioner creates (the services may only read from them). */
export function durableConsumers(subjects: Subjects): ConsumerContract[] {
  return STREAMS.flatMap((spec) =>
    spec.readers
      .filter((reader) => reader.durable !== undefined)
      .map((reader) => ({
        stream: subjects.streams[spec.stream].name,
        durable: reader.durable as string,
        filter: withPrefix(reader.filter, subjects.prefix),
      })),
  );
}

export interface ProvisionReport {
  created: string[];
  updated: string[];
  unchanged: string[];
}

/** A stream or consumer the provisioner cannot bring in line: it says which and what to do. */
export class ProvisionError extends Error {}

const STREAM_NOT_FOUND = 10059;
const CONSUMER_NOT_FOUND = 10014;

/**
 * Creates every asset that is missing and brings every existing one in line with the contract
 * and the settings (including taking away a RePublish, sources or a subject transform someone
 * added). Idempotent. Throws ProvisionError naming what it cannot change.
 */
export async function provision(
  jsm: JetStreamManager,
  subjects: Subjects,
  settings: ProvisionSettings,
): Promise<ProvisionReport> {
  const report: ProvisionReport = { created: [], updated: [], unchanged: [] };
  for (const asset of jetStreamAssets(subjects, settings)) {
    const name = asset.config.name;
    const current = await streamInfo(jsm, name);
    if (current === undefined) {
      await jsm.streams.add(asset.config);
      report.created.push(name);
      continue;
    }
    if (current.mirror) {
      throw new ProvisionError(
        `stream ${name} mirrors ${JSON.stringify(current.mirror)}, which JetStream cannot take away; ` +
          `delete it (nats stream rm ${name}) and run toolbus provision again`,
      );
    }
    if (!needsUpdate(asset.config, current)) {
      report.unchanged.push(name);
      continue;
    }
    try {
      // Named as undefined, they are left out of the update: JetStream takes them away.
      await jsm.streams.update(name, {
        ...asset.config,
        republish: undefined,
        sources: undefined,
        subject_transform: undefined,
      } as Partial<StreamConfig>);
    } catch (err) {
      throw new ProvisionError(
        `stream ${name} cannot be brought in line with the contract (${errorText(err)}); ` +
          `change it back, or delete it (nats stream rm ${name}) if its data may go, and run toolbus provision again`,
        { cause: err },
      );
    }
    report.updated.push(name);
  }
  for (const durable of durableConsumers(subjects)) {
    const consumer = `${durable.stream}/${durable.durable}`;
    const limits = {
      ack_wait: nanos(settings.memoryConsumer.ackWaitMs),
      // Unbounded: the service parks a failing message itself, so the server never drops one.
      max_deliver: -1,
      max_ack_pending: settings.memoryConsumer.maxAckPending,
    };
    const current = await jsm.consumers.info(durable.stream, durable.durable).catch((err: unknown) => {
      if (err instanceof JetStreamApiError && err.code === CONSUMER_NOT_FOUND) return undefined;
      throw err;
    });
    if (current === undefined) {
      await jsm.consumers.add(durable.stream, {
        durable_name: durable.durable,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        filter_subject: durable.filter,
        ...limits,
      });
      report.created.push(consumer);
      continue;
    }
    const differences = consumerDifferences(durable, current.config);
    if (differences.length > 0) {
      throw new ProvisionError(
        `consumer ${durable.durable} on ${durable.stream} differs from the contract: ${differences.join("; ")}; ` +
          `delete it (nats consumer rm ${durable.stream} ${durable.durable}) and run toolbus provision again: the stream keeps the messages`,
      );
    }
    const c = current.config;
    if (
      c.ack_wait === limits.ack_wait &&
      c.max_deliver === limits.max_deliver &&
      c.max_ack_pending === limits.max_ack_pending
    ) {
      report.unchanged.push(consumer);
      continue;
    }
    await jsm.consumers.update(durable.stream, durable.durable, limits);
    report.updated.push(consumer);
  }
  return report;
}

/** The fields the provisioner sets that differ in `current`, plus anything the contract forbids. */
function needsUpdate(wanted: StreamConfig, current: StreamConfig): boolean {
  if (contractDifferences(contractOf(wanted), current as ActualStreamConfig).length > 0) return true;
  const keys = Object.keys(wanted) as Array<keyof StreamConfig>;
  return keys.some(
    (key) => key !== "subjects" && JSON.stringify(wanted[key]) !== JSON.stringify(current[key]),
  );
}

async function streamInfo(jsm: JetStreamManager, name: string): Promise<StreamConfig | undefined> {
  try {
    return (await jsm.streams.info(name)).config;
  } catch (err) {
    if (err instanceof JetStreamApiError && err.code === STREAM_NOT_FOUND) return undefined;
    throw err;
  }
}

/** A service found an asset missing or unlike the contract: it names each one and what to do. */
export class AssetsNotProvisioned extends Error {
  constructor(readonly problems: readonly string[]) {
    super(
      `the JetStream assets are not as the contract gives them: ${problems.join("; ")}. ` +
        "Run `toolbus provision` (with the provisioner's identity on an authenticated bus) to create them and restore their configuration",
    );
  }
}

/**
 * Checks, with STREAM.INFO only, that every stream `identity` uses exists and has the contract's
 * configuration (and that its durable consumers are the provisioner's); throws
 * AssetsNotProvisioned listing every difference otherwise.
 */
export async function verifyAssets(
  jsm: JetStreamManager,
  identity: Identity,
  subjects: Subjects,
): Promise<void> {
  const problems: string[] = [];
  const use = identityUse(identity, subjects);
  for (const stream of use.streams) {
    const contract = streamContract(subjects, stream);
    if (contract === undefined) continue;
    let current: StreamConfig | undefined;
    try {
      current = await streamInfo(jsm, stream);
    } catch (err) {
      // Refused by NATS: the identity is the wrong one, which no provisioning cures.
      if (permissionViolation(err)) throw err;
      problems.push(`stream ${stream} cannot be looked at by ${identityName(identity)} (${errorText(err)})`);
      continue;
    }
    if (current === undefined) {
      problems.push(`stream ${stream} does not exist`);
      continue;
    }
    for (const difference of contractDifferences(contract, current as ActualStreamConfig)) {
      problems.push(`stream ${stream}: ${difference}`);
    }
  }
  for (const durable of durableConsumers(subjects)) {
    if (
      !use.jetStreamApi.some((s) => s.endsWith(`.CONSUMER.MSG.NEXT.${durable.stream}.${durable.durable}`))
    ) {
      continue;
    }
    const current = await jsm.consumers.info(durable.stream, durable.durable).catch((err: unknown) => {
      if (err instanceof JetStreamApiError && err.code === CONSUMER_NOT_FOUND) return undefined;
      throw err;
    });
    if (current === undefined) {
      problems.push(`consumer ${durable.durable} on ${durable.stream} does not exist`);
      continue;
    }
    for (const difference of consumerDifferences(durable, current.config)) {
      problems.push(`consumer ${durable.durable} on ${durable.stream}: ${difference}`);
    }
  }
  if (problems.length > 0) throw new AssetsNotProvisioned(problems);
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * The subject of a raw write to a KV key (a `js.publish` with expectations a KV put cannot carry):
 * under the client's API prefix when it has one, as nats.js sends KV writes itself.
 */
export function kvWriteSubject(js: { apiPrefix: string }, bucket: string, key: string): string {
  const subject = `$KV.${bucket}.${key}`;
  return js.apiPrefix === JS_API ? subject : `${js.apiPrefix}.${subject}`;
}

/**
 * Connects as `access` (the provisioner's identity on an authenticated bus), provisions every
 * asset, and closes: what `toolbus provision`, `pnpm start` and the cluster harness run before
 * any service starts.
 */
export async function provisionBus(options: {
  access: NatsAccess;
  subjects: Subjects;
  settings: ProvisionSettings;
}): Promise<ProvisionReport> {
  const nc = await connect({ ...natsConnectionOptions(options.access), name: "toolbus-provision" });
  try {
    const jsm = await jetstreamManager(nc, {
      ...(options.access.jsApiPrefix ? { apiPrefix: options.access.jsApiPrefix } : {}),
      checkAPI: false,
    });
    return await provision(jsm, options.subjects, options.settings);
  } finally {
    await nc.close();
  }
}

/**
 * Idempotent JetStream set-up: `ensureStream`, `ensureKv` and `ensureLargeRepliesStream` create what is missing and bring
 * what exists in line with the config asked for. Calling them twice, or from several replicas
 * at once, is fine.
 */
import {
  JetStreamApiError,
  type JetStreamManager,
  type StreamConfig,
  type StreamInfo,
} from "@nats-io/jetstream";
import type { KV, KvOptions } from "@nats-io/kv";
import type { Bus } from "./bus.js";
import { DEFAULT_EVENT_DELIVERY, eventDuplicateWindowMs } from "./core/backoff.js";
import { kvStreamChanges } from "./core/kv-limits.js";
import { type StreamLimits, streamLimitFields } from "./core/stream-limits.js";
import { EVENT_ACK_TIMEOUT_MS } from "./events.js";
import { type LargeReplyOptions, largeRepliesStreamConfig } from "./large-replies.js";

/** JetStream's "stream name already in use with a different configuration". */
const STREAM_NAME_IN_USE = 10058;

export type EnsureStreamConfig = Partial<StreamConfig> & Pick<StreamConfig, "name">;

/**
 * The stream that takes `<prefix>.events.>`, with its limits; its duplicate window covers the
 * event publisher's default retry budget, so a retried event is stored once. Every service that
 * creates it asks for the same config (from the `[bus]` table), so none undoes another's.
 */
export function ensureEventsStream(
  jsm: JetStreamManager,
  names: { name: string; subjects: readonly string[] },
  limits: StreamLimits,
  /** The bus's (`bus.replicas`): kept on that many nodes. */
  replicas = 1,
): Promise<StreamInfo> {
  return ensureStream(jsm, {
    name: names.name,
    subjects: [...names.subjects],
    ...streamLimitFields(limits, EVENT_DUPLICATE_WINDOW_MS),
    num_replicas: replicas,
  });
}

/** How long JetStream remembers an event's msgID: every retry of one event falls inside it. */
export const EVENT_DUPLICATE_WINDOW_MS = eventDuplicateWindowMs(DEFAULT_EVENT_DELIVERY, EVENT_ACK_TIMEOUT_MS);

export async function ensureStream(jsm: JetStreamManager, config: EnsureStreamConfig): Promise<StreamInfo> {
  try {
    // Creating a stream that exists with the same config succeeds, so this covers reruns and races.
    return await jsm.streams.add({ ...config });
  } catch (err) {
    if (!(err instanceof JetStreamApiError && err.code === STREAM_NAME_IN_USE)) throw err;
  }
  const { name, ...changes } = config;
  try {
    return await jsm.streams.update(name, changes);
  } catch (err) {
    throw new Error(
      `stream ${name} exists with a config that cannot be changed to the one asked for (${errorText(err)}); ` +
        `change it back, or delete the stream (nats stream rm ${name}) if its data may go`,
      { cause: err },
    );
  }
}

/**
 * Opens the bucket, creating it when missing and updating its limits when they differ from `opts`.
 * Its replicas are the bus's (`bus.replicas`) unless `opts` says otherwise.
 */
export async function ensureKv(
  bus: Pick<Bus, "kvm" | "jsm" | "replicas">,
  bucket: string,
  kvOptions: Partial<KvOptions> = {},
): Promise<KV> {
  const opts = { replicas: bus.replicas, ...kvOptions };
  const kv = await bus.kvm().create(bucket, opts);
  const stream = `KV_${bucket}`;
  const jsm = await bus.jsm();
  const { config } = await jsm.streams.info(stream);
  const changes = kvStreamChanges(opts, config);
  if (Object.keys(changes).length > 0) {
    try {
      await jsm.streams.update(stream, changes);
    } catch (err) {
      throw new Error(
        `KV bucket ${bucket} exists with limits that cannot be changed to ${JSON.stringify(changes)} (${errorText(err)}); ` +
          `change the options back, or delete the bucket (nats kv rm ${bucket}) if its data may go`,
        { cause: err },
      );
    }
  }
  return kv;
}

/**
 * Creates the large-replies stream when missing and brings an existing one in line with
 * `largeRepliesStreamConfig` (until provisioning creates it, the services that store replies do).
 */
export function ensureLargeRepliesStream(
  bus: Pick<Bus, "jsm" | "replicas">,
  options: LargeReplyOptions,
): Promise<StreamInfo> {
  return bus.jsm().then((jsm) => ensureStream(jsm, largeRepliesStreamConfig(options, bus.replicas)));
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

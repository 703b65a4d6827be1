/**
 * Which limits of an existing KV bucket's stream must change to match the options a caller
 * asks for. Options left out are left as they are.
 */

/** The subset of `KvOptions` that `ensureKv` brings an existing bucket in line with. */
export interface KvLimits {
  history?: number;
  /** Milliseconds; 0 means entries never expire. */
  ttl?: number;
  max_bytes?: number;
  maxValueSize?: number;
  replicas?: number;
  description?: string;
}

/** The stream-config fields those options map to. */
export interface KvStreamLimits {
  max_msgs_per_subject: number;
  /** Nanoseconds. */
  max_age: number;
  max_bytes: number;
  max_msg_size: number;
  num_replicas: number;
  description?: string;
  /** Nanoseconds; JetStream refuses a duplicate window longer than a non-zero max_age. */
  duplicate_window?: number;
}

const NANOS_PER_MILLI = 1_000_000;

export function kvStreamChanges(wanted: KvLimits, current: KvStreamLimits): Partial<KvStreamLimits> {
  const target: Partial<KvStreamLimits> = {
    ...(wanted.history === undefined ? {} : { max_msgs_per_subject: wanted.history }),
    ...(wanted.ttl === undefined ? {} : { max_age: wanted.ttl * NANOS_PER_MILLI }),
    ...(wanted.max_bytes === undefined ? {} : { max_bytes: wanted.max_bytes }),
    ...(wanted.maxValueSize === undefined ? {} : { max_msg_size: wanted.maxValueSize }),
    ...(wanted.replicas === undefined ? {} : { num_replicas: wanted.replicas }),
    ...(wanted.description === undefined ? {} : { description: wanted.description }),
  };
  const changes: Partial<KvStreamLimits> = {};
  for (const [key, value] of Object.entries(target) as Array<[keyof KvStreamLimits, number | string]>) {
    if ((current[key] ?? "") !== value) Object.assign(changes, { [key]: value });
  }
  const maxAge = changes.max_age ?? current.max_age;
  if (changes.max_age !== undefined && maxAge > 0 && (current.duplicate_window ?? 0) > maxAge) {
    changes.duplicate_window = maxAge;
  }
  return changes;
}

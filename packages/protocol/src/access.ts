/**
 * Who may do what on the bus: the identities (roles) that connect to NATS, which subjects each
 * one serves, requests, publishes and subscribes to, and which JetStream assets each may create,
 * write or read. `permissionsFor` turns these tables into the NATS publish/subscribe allow lists
 * that `toolbus nats-config` writes into the server's config; nothing else grants bus access.
 *
 * The contract's subjects (`SUBJECTS`) name their users in the table itself; the subjects the
 * services keep among themselves are in `INTERNAL_SUBJECTS` below, in the same shape.
 */
import { type QueueGroup, Role, SUBJECTS, type SubjectSpec, type Subjects } from "./subjects.js";

export const ROLES: readonly Role[] = Object.freeze(Object.values(Role));

/**
 * Each identity's own reply-subject prefix. Replies and JetStream deliveries reach a client on
 * its inbox, so each identity may subscribe to its own prefix only and no client can read
 * another's replies (a shared `_INBOX.>` would let any client read every reply).
 */
export function inboxPrefix(prefix: string, role: Role): string {
  return `_INBOX_${prefix}_${role}`;
}

/** The subjects the services keep among themselves: same shape as `SUBJECTS`, same prefix. */
export function internalSubjects(prefix: string) {
  return Object.freeze({
    /** Request/reply: the memory messages set aside instead of counted. */
    memoryParked: `${prefix}.memory.parked`,
    /** Request/reply subjects only the catalog replica that owns `server` answers. */
    connectorOwner: (server: string) =>
      Object.freeze({
        resourcesList: `${prefix}.connector.${server}.resources.list`,
        resourcesRead: `${prefix}.connector.${server}.resources.read`,
        promptsList: `${prefix}.connector.${server}.prompts.list`,
        promptsGet: `${prefix}.connector.${server}.prompts.get`,
        complete: `${prefix}.connector.${server}.completion.complete`,
        refresh: `${prefix}.connector.${server}.refresh`,
      }),
    /** Event: a client ended an MCP session with DELETE; every gateway replica drops it. */
    gatewaySessionClosed: `${prefix}.gateway.session_closed`,
    /** Event: a client's answer to a request another gateway replica asked, passed to that replica. */
    gatewayResponses: `${prefix}.gateway.responses`,
    kv: Object.freeze({
      resourceOrigins: `${prefix}_resource_origins`,
      gatewaySessions: `${prefix}_gateway_sessions`,
      /** One record per dispatch callId: runs once across dispatcher replicas. */
      calls: `${prefix}_calls`,
      /** One record per connector callId: a tool runs once across catalog replicas. */
      executions: `${prefix}_executions`,
      /** The effective approval policy, under `APPROVAL_POLICY_KEY`: approvals writes it, dispatchers follow it. */
      approvalPolicy: `${prefix}_approval_policy`,
    }),
  });
}

/** The key of the effective approval policy in `internalSubjects(prefix).kv.approvalPolicy`. */
export const APPROVAL_POLICY_KEY = "effective";

const internal = (
  subject: string,
  kind: SubjectSpec["kind"],
  request: string,
  reply: string | null,
  owner: QueueGroup,
  users: readonly Role[],
  description: string,
): SubjectSpec => Object.freeze({ subject, kind, request, reply, owner, users, description });

/** Subjects outside the external contract, with the default prefix; the schemas live with their owner. */
// biome-ignore format: a table reads best one row per line
export const INTERNAL_SUBJECTS: readonly SubjectSpec[] = Object.freeze([
  internal("toolbus.memory.parked", "req/reply", "MemoryParkedRequest", "MemoryParkedResult", "memory", ["cli"], "Memory messages set aside instead of counted."),
  internal("toolbus.connector.<server>.resources.list", "req/reply", "OwnerListRequest", "ResourcesListResult", "catalog", ["catalog"], "One server's resources, from the replica that owns it."),
  internal("toolbus.connector.<server>.resources.read", "req/reply", "OwnerReadRequest", "ResourcesReadResult", "catalog", ["catalog"], "Read a resource on the replica that owns its server."),
  internal("toolbus.connector.<server>.prompts.list", "req/reply", "OwnerPromptsListRequest", "PromptsListResult", "catalog", ["catalog"], "One server's prompts, from the replica that owns it."),
  internal("toolbus.connector.<server>.prompts.get", "req/reply", "OwnerPromptsGetRequest", "GetPromptResult", "catalog", ["catalog"], "Get a prompt on the replica that owns its server."),
  internal("toolbus.connector.<server>.completion.complete", "req/reply", "OwnerCompleteRequest", "CompleteResult", "catalog", ["catalog"], "Completions on the replica that owns the server."),
  internal("toolbus.connector.<server>.refresh", "req/reply", "OwnerRefreshRequest", "CatalogRefreshResult", "catalog", ["catalog"], "Re-list one server on the replica that owns it."),
  internal("toolbus.gateway.session_closed", "event", "SessionClosed", null, "gateway", ["gateway"], "A client ended an MCP session; every gateway replica drops it."),
  internal("toolbus.gateway.responses", "event", "ForwardedResponse", null, "gateway", ["gateway"], "A client's answer to a request another gateway replica asked."),
]);

/** What a role may do with a KV bucket. `create` includes `read`, `write` includes `read`. */
export type BucketAccess = "read" | "write";

export interface BucketSpec {
  /** The bucket name with the default prefix. */
  readonly bucket: string;
  /** Roles that create it when missing (and bring its limits in line). */
  readonly creators: readonly Role[];
  readonly writers: readonly Role[];
  readonly readers: readonly Role[];
  /**
   * For call records: the role whose instances own them. Whoever reads or writes the bucket may
   * ping those instances (`$SRV.PING.<role>.<id>`) to learn whether a record's owner still lives.
   */
  readonly recordOwner?: Role;
  readonly description: string;
}

// biome-ignore format: a table reads best one row per line
export const BUCKETS: readonly BucketSpec[] = Object.freeze([
  Object.freeze({ bucket: "toolbus_catalog", creators: ["catalog", "dispatcher"], writers: ["catalog"], readers: ["dispatcher", "gateway"], description: "One entry per server: its status and raw tools." } as const),
  Object.freeze({ bucket: "toolbus_approval_grants", creators: ["approvals"], writers: ["approvals"], readers: [], description: "\"Allow for this session\" grants, bound to the tool's fingerprint." } as const),
  Object.freeze({ bucket: "toolbus_resource_origins", creators: ["catalog"], writers: ["catalog"], readers: [], description: "Which call produced a resource URI (24 h)." } as const),
  Object.freeze({ bucket: "toolbus_gateway_sessions", creators: ["gateway"], writers: ["gateway"], readers: [], description: "MCP session records shared by the gateway replicas." } as const),
  Object.freeze({ bucket: "toolbus_call_history", creators: ["dispatcher"], writers: ["dispatcher"], readers: [], description: "Each thread's call events by stream sequence, for dispatch.history." } as const),
  Object.freeze({ bucket: "toolbus_calls", creators: ["dispatcher"], writers: ["dispatcher"], readers: ["gateway"], recordOwner: "dispatcher", description: "One record per dispatch callId, then its reply: a call runs once across replicas." } as const),
  Object.freeze({ bucket: "toolbus_approval_policy", creators: ["approvals", "dispatcher"], writers: ["approvals"], readers: ["dispatcher"], description: "The effective approval policy (modes, hooks, policy words): the dispatcher settles locally what it alone settles." } as const),
  Object.freeze({ bucket: "toolbus_executions", creators: ["catalog"], writers: ["catalog"], readers: ["dispatcher"], recordOwner: "catalog", description: "One record per connector callId, then its result: a tool runs once across replicas." } as const),
]);

export interface StreamSpec {
  /** `events` or `memory`: the key in `Subjects.streams`. */
  readonly stream: "events" | "memory";
  readonly creators: readonly Role[];
  /**
   * Roles that read it through a consumer, each with the one filter it may use; `bySequence`
   * also lets it fetch one message by its sequence (not limited by subject).
   */
  readonly readers: ReadonlyArray<{
    readonly role: Role;
    readonly filter: string;
    readonly durable?: string;
    readonly bySequence?: boolean;
  }>;
}

// biome-ignore format: a table reads best one row per line
export const STREAMS: readonly StreamSpec[] = Object.freeze([
  Object.freeze({ stream: "events", creators: ["catalog", "dispatcher"], readers: [{ role: "dispatcher", filter: "toolbus.events.call.>", bySequence: true }] } as const),
  Object.freeze({ stream: "memory", creators: ["memory"], readers: [{ role: "memory", filter: "toolbus.memory.message", durable: "memory" }] } as const),
]);

/**
 * The large-replies stream (`Subjects.streams.large`): a reply larger than one NATS
 * message is stored there in chunks addressed to the role it answers,
 * `<prefix>.large.<role>.<id>.<index>`. Writers publish chunks (a JetStream publish: its PubAck
 * comes on the writer's inbox); readers get the chunks addressed to their own role by direct get
 * and nothing else. Nobody may delete or purge: the stream's max age removes replies.
 */
export interface LargeRepliesSpec {
  /** Roles that create the stream when missing (until provisioning creates it). */
  readonly creators: readonly Role[];
  readonly writers: readonly Role[];
  readonly readers: readonly Role[];
}

// biome-ignore format: a table reads best one row per line
export const LARGE_REPLIES: LargeRepliesSpec = Object.freeze({ creators: ["catalog", "dispatcher"], writers: ["catalog", "dispatcher"], readers: ["dispatcher", "gateway", "cli", "agent"] } as const);

export interface Permissions {
  readonly publish: readonly string[];
  readonly subscribe: readonly string[];
  /** May answer requests it received (each reply subject once). */
  readonly allowResponses: boolean;
}

/** `<server>` and `<callId>` become one-token wildcards; the default prefix becomes `prefix`. */
function template(subject: string, prefix: string): string {
  const withPrefix = subject.startsWith("toolbus.")
    ? `${prefix}.${subject.slice("toolbus.".length)}`
    : subject;
  return withPrefix.replaceAll("<server>", "*").replaceAll("<callId>", "*");
}

function bucketName(bucket: string, prefix: string): string {
  return `${prefix}_${bucket.slice("toolbus_".length)}`;
}

/** The allow lists of one role under one prefix, sorted and without duplicates. */
export function permissionsFor(role: Role, subjects: Subjects): Permissions {
  const prefix = subjects.prefix;
  const publish = new Set<string>();
  const subscribe = new Set<string>([`${inboxPrefix(prefix, role)}.>`]);
  let serves = false;

  for (const row of [...SUBJECTS, ...INTERNAL_SUBJECTS]) {
    const subject = template(row.subject, prefix);
    const owns = row.owner === role;
    const uses = row.users.includes(role);
    if (row.kind === "req/reply") {
      // The owner serves (subscribes, answers); users request (publish).
      if (owns) {
        subscribe.add(subject);
        serves = true;
      }
      if (uses) publish.add(subject);
    } else if (row.subject === "toolbus.memory.message") {
      // Published by its users into the stream; the owner reads it through its durable consumer.
      if (uses) publish.add(subject);
    } else {
      // Events (core or JetStream): the owner publishes, users subscribe.
      if (owns) publish.add(subject);
      if (uses) subscribe.add(subject);
    }
  }

  if (serves) {
    // Every service is a NATS micro service (`$SRV.PING|INFO|STATS[.<name>[.<id>]]`).
    for (const pattern of ["$SRV.*", `$SRV.*.${role}`, `$SRV.*.${role}.*`]) subscribe.add(pattern);
  }

  const jsApi = "$JS.API";
  const grantStreamAdmin = (stream: string) => {
    publish.add(`${jsApi}.INFO`);
    publish.add(`${jsApi}.STREAM.INFO.${stream}`);
    publish.add(`${jsApi}.STREAM.CREATE.${stream}`);
    publish.add(`${jsApi}.STREAM.UPDATE.${stream}`);
  };
  for (const spec of BUCKETS) {
    const bucket = bucketName(spec.bucket, prefix);
    const stream = `KV_${bucket}`;
    const creates = spec.creators.includes(role);
    const writes = spec.writers.includes(role);
    const reads = writes || spec.readers.includes(role);
    if (creates) grantStreamAdmin(stream);
    if (writes) publish.add(`$KV.${bucket}.>`);
    if (reads) {
      publish.add(`${jsApi}.STREAM.INFO.${stream}`);
      publish.add(`${jsApi}.DIRECT.GET.${stream}.$KV.${bucket}.>`);
      // A bucket opened without direct gets reads by this subject (not limited by key: fine for
      // a reader of the whole bucket, which is what every reader here is).
      publish.add(`${jsApi}.STREAM.MSG.GET.${stream}`);
      // Watches, key listings and history: ordered consumers filtered to this bucket's keys.
      publish.add(`${jsApi}.CONSUMER.CREATE.${stream}.*.$KV.${bucket}.>`);
      publish.add(`${jsApi}.CONSUMER.INFO.${stream}.*`);
      publish.add(`${jsApi}.CONSUMER.DELETE.${stream}.*`);
      publish.add(`$JS.FC.${stream}.>`);
      if (spec.recordOwner !== undefined) publish.add(`$SRV.PING.${spec.recordOwner}.*`);
    }
  }
  for (const spec of STREAMS) {
    const stream = subjects.streams[spec.stream].name;
    if (spec.creators.includes(role)) grantStreamAdmin(stream);
    for (const reader of spec.readers.filter((r) => r.role === role)) {
      const filter = template(reader.filter, prefix);
      publish.add(`${jsApi}.STREAM.INFO.${stream}`);
      const name = reader.durable ?? "*";
      publish.add(`${jsApi}.CONSUMER.CREATE.${stream}.${name}.${filter}`);
      publish.add(`${jsApi}.CONSUMER.INFO.${stream}.${name}`);
      publish.add(`${jsApi}.CONSUMER.DELETE.${stream}.${name}`);
      publish.add(`${jsApi}.CONSUMER.MSG.NEXT.${stream}.${name}`);
      publish.add(`$JS.ACK.${stream}.${name}.>`);
      publish.add(`$JS.FC.${stream}.>`);
      if (reader.bySequence) {
        publish.add(`${jsApi}.DIRECT.GET.${stream}`);
        publish.add(`${jsApi}.STREAM.MSG.GET.${stream}`);
      }
    }
  }
  {
    const { name: stream } = subjects.streams.large;
    if (LARGE_REPLIES.creators.includes(role)) grantStreamAdmin(stream);
    if (LARGE_REPLIES.writers.includes(role)) publish.add(`${prefix}.large.*.>`);
    if (LARGE_REPLIES.readers.includes(role)) {
      publish.add(`${jsApi}.DIRECT.GET.${stream}.${prefix}.large.${role}.>`);
    }
  }

  return Object.freeze({
    publish: Object.freeze([...publish].sort()),
    subscribe: Object.freeze([...subscribe].sort()),
    allowResponses: serves,
  });
}

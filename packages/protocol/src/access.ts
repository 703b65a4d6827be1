/**
 * Who may do what on the bus: the identities that connect to NATS, the subjects each one serves,
 * requests, publishes and subscribes to, and what each may do with each JetStream asset. Two
 * things are derived from these tables and nothing else grants bus access:
 * - `permissionsFor`: one identity's publish/subscribe allow lists (in its own account);
 * - `busLayout` (bus-layout.ts): the NATS accounts, one per identity, and the imports and
 *   exports between them that `toolbus nats-config` writes into the server's config.
 *
 * The contract's subjects (`SUBJECTS`) name their users in the table itself; the subjects the
 * services keep among themselves are in `INTERNAL_SUBJECTS` below, in the same shape.
 */
import { PRINCIPAL_FIELDS, principalSubjectsServed } from "./principal-authority.js";
import { SERVER_NAME_PATTERN } from "./schemas/primitives.js";
import { Role, SUBJECTS, type SubjectSpec, type Subjects } from "./subjects.js";

export const ROLES: readonly Role[] = Object.freeze(Object.values(Role));

/**
 * One NATS identity. A connector's identity belongs to one MCP server: it may answer that
 * server's calls and write that server's catalog entry, and nothing of any other server.
 */
export interface Identity {
  readonly role: Role;
  /** The MCP server, for a connector (and only for one). */
  readonly server?: string;
}

/** The identity of `role`; a connector needs its server. */
export function identityOf(role: Role, server?: string): Identity {
  if (role === "connector") {
    if (server === undefined || !SERVER_NAME_PATTERN.test(server)) {
      throw new Error(
        `a connector identity needs the name of its MCP server (got ${JSON.stringify(server)})`,
      );
    }
    return Object.freeze({ role, server });
  }
  return Object.freeze({ role });
}

/** `dispatcher`, `connector-github`: the identity's file name, account and micro-service name. */
export function identityName(identity: Identity): string {
  return identity.role === "connector" ? `connector-${identity.server}` : identity.role;
}

/** Every identity a deployment whose config has `servers` needs: one per role, one connector per server. */
export function busIdentities(servers: readonly string[]): Identity[] {
  return [
    ...ROLES.filter((role) => role !== "connector").map((role) => identityOf(role)),
    ...[...new Set(servers)].sort().map((server) => identityOf("connector", server)),
  ];
}

/**
 * Each identity's own reply-subject prefix. Replies and JetStream deliveries reach a client on
 * its inbox, so each identity subscribes to its own prefix only.
 */
export function inboxPrefix(prefix: string, identity: Identity | Role): string {
  const name = typeof identity === "string" ? identity : identityName(identity);
  return `_INBOX_${prefix}_${name.replaceAll("-", "_")}`;
}

/** The subjects the services keep among themselves: same shape as `SUBJECTS`, same prefix. */
export function internalSubjects(prefix: string) {
  return Object.freeze({
    /** Request/reply: the memory messages set aside instead of counted. */
    memoryParked: `${prefix}.memory.parked`,
    /** Request/reply subjects only the connector of `server` answers (the catalog asks them). */
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
      /** One record per connector callId, under `<server>.`: a tool runs once across its connectors. */
      executions: `${prefix}_executions`,
      /** The effective approval policy, under `APPROVAL_POLICY_KEY`: approvals writes it, dispatchers follow it. */
      approvalPolicy: `${prefix}_approval_policy`,
    }),
  });
}

/**
 * Where a connector keeps its records in the executions and resource-origins buckets: under its
 * server (`github.`), the keys its identity may write (`<server>.>` in `BUCKETS`).
 */
export function serverKeyPrefix(server: string): string {
  if (!SERVER_NAME_PATTERN.test(server)) throw new Error(`not a server name: ${JSON.stringify(server)}`);
  return `${server}.`;
}

/** The key of the effective approval policy in `internalSubjects(prefix).kv.approvalPolicy`. */
export const APPROVAL_POLICY_KEY = "effective";

/** The key under which the catalog publishes its naming options in the catalog bucket. */
export const CATALOG_NAMING_KEY = "naming";

const internal = (
  subject: string,
  kind: SubjectSpec["kind"],
  request: string,
  reply: string | null,
  owner: Role,
  users: readonly Role[],
  description: string,
): SubjectSpec => Object.freeze({ subject, kind, request, reply, owner, users, description });

/** Subjects outside the external contract, with the default prefix; the schemas live with their owner. */
// biome-ignore format: a table reads best one row per line
export const INTERNAL_SUBJECTS: readonly SubjectSpec[] = Object.freeze([
  internal("toolbus.memory.parked", "req/reply", "MemoryParkedRequest", "MemoryParkedResult", "memory", ["cli"], "Memory messages set aside instead of counted."),
  internal("toolbus.connector.<server>.resources.list", "req/reply", "OwnerListRequest", "ResourcesListResult", "connector", ["catalog"], "One server's resources, from its connector."),
  internal("toolbus.connector.<server>.resources.read", "req/reply", "OwnerReadRequest", "ResourcesReadResult", "connector", ["catalog"], "Read a resource on its server's connector."),
  internal("toolbus.connector.<server>.prompts.list", "req/reply", "OwnerPromptsListRequest", "PromptsListResult", "connector", ["catalog"], "One server's prompts, from its connector."),
  internal("toolbus.connector.<server>.prompts.get", "req/reply", "OwnerPromptsGetRequest", "PromptsGetResult", "connector", ["catalog"], "Get a prompt on its server's connector."),
  internal("toolbus.connector.<server>.completion.complete", "req/reply", "OwnerCompleteRequest", "CompleteResult", "connector", ["catalog"], "Completions on the server's connector."),
  internal("toolbus.connector.<server>.refresh", "req/reply", "OwnerRefreshRequest", "CatalogRefreshResult", "connector", ["catalog"], "Re-list one server on its connector."),
  internal("toolbus.gateway.session_closed", "event", "SessionClosed", null, "gateway", ["gateway"], "A client ended an MCP session; every gateway replica drops it."),
  internal("toolbus.gateway.responses", "event", "ForwardedResponse", null, "gateway", ["gateway"], "A client's answer to a request another gateway replica asked."),
]);

/**
 * What an identity may do with some keys of a KV bucket:
 * - `read`: get them (direct get by key);
 * - `watch`: read them and follow or list them (ordered consumers filtered to those keys);
 * - `write`: put, create, update and delete them, and read them back.
 */
export type KeyAccess = "read" | "watch" | "write";

export interface BucketAccess {
  readonly role: Role;
  readonly access: KeyAccess;
  /** The keys: `>` for all of them; `<server>` stands for a connector's own server. */
  readonly keys: string;
}

export interface BucketSpec {
  /** The bucket name with the default prefix. */
  readonly bucket: string;
  readonly grants: readonly BucketAccess[];
  /**
   * For call records: the role whose instances own them. Whoever reads or writes the bucket may
   * ping those instances (`$SRV.PING.<name>.<id>`) to learn whether a record's owner still lives.
   */
  readonly recordOwner?: Role;
  readonly description: string;
}

const grant = (role: Role, access: KeyAccess, keys = ">"): BucketAccess =>
  Object.freeze({ role, access, keys });

// biome-ignore format: a table reads best one row per line
export const BUCKETS: readonly BucketSpec[] = Object.freeze<BucketSpec[]>([
  { bucket: "toolbus_catalog", grants: [grant("connector", "write", "server.<server>"), grant("connector", "watch", "server.<server>"), grant("catalog", "write", CATALOG_NAMING_KEY), grant("catalog", "watch"), grant("dispatcher", "watch"), grant("gateway", "watch")], description: "One entry per server (its status and raw tools), written by that server's connector; the catalog's naming options." },
  { bucket: "toolbus_approval_grants", grants: [grant("approvals", "write"), grant("approvals", "watch")], description: "\"Allow for this session\" grants, bound to the tool's fingerprint." },
  { bucket: "toolbus_resource_origins", grants: [grant("connector", "write", "<server>.>"), grant("catalog", "read")], description: "Which call produced a resource URI (24 h), under the server that answered it." },
  { bucket: "toolbus_gateway_sessions", grants: [grant("gateway", "write")], description: "MCP session records shared by the gateway replicas." },
  { bucket: "toolbus_call_history", grants: [grant("dispatcher", "write"), grant("dispatcher", "watch")], description: "Each thread's call events by stream sequence, for dispatch.history." },
  { bucket: "toolbus_calls", grants: [grant("dispatcher", "write"), grant("gateway", "read")], recordOwner: "dispatcher", description: "One record per dispatch callId, then its reply: a call runs once across replicas." },
  { bucket: "toolbus_approval_policy", grants: [grant("approvals", "write", APPROVAL_POLICY_KEY), grant("dispatcher", "watch")], description: "The effective approval policy (modes, hooks, policy words): the dispatcher settles locally what it alone settles." },
  { bucket: "toolbus_executions", grants: [grant("connector", "write", "<server>.>"), grant("dispatcher", "read")], recordOwner: "connector", description: "One record per connector callId under its server, then its result: a tool runs once across that server's connectors." },
]);

/** A reader of a stream through consumers filtered to one subject (ordered ones, or one durable). */
export interface StreamReader {
  readonly role: Role;
  /** With the default prefix. */
  readonly filter: string;
  /** A durable pull consumer the provisioner creates; the reader may only fetch from and ack it. */
  readonly durable?: string;
}

export interface StreamSpec {
  /** The key in `Subjects.streams`. */
  readonly stream: "events" | "memory" | "large";
  /** Who publishes into it beyond the `stream` rows of the subject tables, and on which subject. */
  readonly writers: ReadonlyArray<{ readonly role: Role; readonly subject: string }>;
  readonly readers: readonly StreamReader[];
  /**
   * Who reads single messages by subject (direct get, last by subject) under `subject`, where
   * `<name>` is the reader's own identity name: it reads nothing addressed to anyone else.
   */
  readonly directReaders?: { readonly roles: readonly Role[]; readonly subject: string };
}

/** Who asks for replies that may be too large for one message, and who answers them. */
const LARGE_REPLY_WRITERS: readonly Role[] = ["catalog", "connector", "dispatcher"];
const LARGE_REPLY_READERS: readonly Role[] = ["catalog", "dispatcher", "gateway", "cli", "agent"];

// biome-ignore format: a table reads best one row per line
export const STREAMS: readonly StreamSpec[] = Object.freeze<StreamSpec[]>([
  { stream: "events", writers: [], readers: [{ role: "dispatcher", filter: "toolbus.events.call.>" }] },
  { stream: "memory", writers: [], readers: [{ role: "memory", filter: "toolbus.memory.message", durable: "memory" }] },
  { stream: "large", writers: LARGE_REPLY_WRITERS.map((role) => ({ role, subject: "toolbus.large.*.>" })), readers: [], directReaders: { roles: LARGE_REPLY_READERS, subject: "toolbus.large.<name>.>" } },
]);

/** The local name under which an identity's account reaches JetStream's API (see bus-layout.ts). */
export const LOCAL_JS_API = "$TOOLBUS.JS.API";
/** JetStream's own API prefix, in the account that holds the streams. */
export const JS_API = "$JS.API";

export interface Permissions {
  readonly publish: readonly string[];
  readonly subscribe: readonly string[];
  /** May answer requests it received (each reply subject once). */
  readonly allowResponses: boolean;
}

/** `<callId>` becomes a one-token wildcard; the default prefix becomes `prefix`; `<server>` as given. */
export function withPrefix(subject: string, prefix: string, server = "*"): string {
  const prefixed = subject.startsWith("toolbus.") ? `${prefix}.${subject.slice("toolbus.".length)}` : subject;
  return prefixed.replaceAll("<server>", server).replaceAll("<callId>", "*");
}

/** The bucket's name under `prefix`. */
export function bucketName(bucket: string, prefix: string): string {
  return `${prefix}_${bucket.slice("toolbus_".length)}`;
}

/** The KV keys a grant covers, for one identity (a connector's `<server>` is its own). */
export function grantKeys(grant: BucketAccess, identity: Identity): string {
  return grant.keys.replaceAll("<server>", identity.server ?? "*");
}

/** The stream that holds a bucket. */
export function bucketStream(bucket: string): string {
  return `KV_${bucket}`;
}

/** Whether a table row that names `role` applies to `identity` (a connector row only to its server). */
function applies(role: Role, identity: Identity): boolean {
  return role === identity.role;
}

/**
 * Everything one identity does on the bus, as subjects of its own account: the JetStream API
 * under `jsApi` (`LOCAL_JS_API` in its own account; JetStream's own `$JS.API` where the streams
 * live). The building block of both the allow lists and the account layout.
 */
export interface IdentityUse {
  /** Request/reply subjects it answers. */
  readonly serves: readonly string[];
  /** Request/reply subjects it asks. */
  readonly requests: readonly string[];
  /** Events it publishes (core, or into a stream: `stored`). */
  readonly publishes: ReadonlyArray<{ readonly subject: string; readonly stored: boolean }>;
  /** Events it subscribes to. */
  readonly subscribes: readonly string[];
  /** JetStream API requests, as `$JS.API.…` subjects (mapped to `LOCAL_JS_API` in its account). */
  readonly jetStreamApi: readonly string[];
  /** KV writes, as `$KV.<bucket>.<keys>` (mapped under `LOCAL_JS_API` in its account, as nats.js sends them). */
  readonly kvWrites: readonly string[];
  /** Acknowledgements and flow-control replies to JetStream (same subject in every account). */
  readonly jetStreamReplies: readonly string[];
  /** Pings of the instances that own call records: `$SRV.PING.<name>.*`, per owning identity name. */
  readonly pings: ReadonlyArray<{ readonly ownerRole: Role; readonly subject: string }>;
  /** Streams whose configuration it reads at start (`STREAM.INFO`), to check them. */
  readonly streams: readonly string[];
  /** Whether JetStream delivers to its inbox (watches, key listings, ordered consumers). */
  readonly receivesDeliveries: boolean;
}

/** What `identity` does on the bus under `subjects`' prefix. */
export function identityUse(identity: Identity, subjects: Subjects): IdentityUse {
  const prefix = subjects.prefix;
  const server = identity.role === "connector" ? identity.server : undefined;
  const concrete = (subject: string) => withPrefix(subject, prefix, server ?? "*");
  const serves = new Set<string>();
  const requests = new Set<string>();
  const publishes = new Map<string, boolean>();
  const subscribes = new Set<string>();
  const api = new Set<string>();
  const kvWrites = new Set<string>();
  const replies = new Set<string>();
  const pings = new Map<string, Role>();
  const streams = new Set<string>();
  let deliveries = false;

  for (const row of [...SUBJECTS, ...INTERNAL_SUBJECTS]) {
    const owns = applies(row.owner, identity);
    const uses = row.users.some((user) => applies(user, identity));
    const subject = concrete(row.subject);
    if (row.kind === "req/reply") {
      // A subject that may name a principal arrives at its owner tagged with its sender too.
      if (owns) {
        for (const served of row.subject in PRINCIPAL_FIELDS ? principalSubjectsServed(subject) : [subject])
          serves.add(served);
      }
      if (uses) requests.add(subject);
    } else if (row.subject === "toolbus.memory.message") {
      // Published by its users into its stream; the owner reads it through its durable consumer.
      if (uses) publishes.set(subject, true);
    } else {
      // Events (core, or stored in the events stream): the owner publishes, users subscribe.
      if (owns) publishes.set(subject, row.kind === "stream");
      if (uses) subscribes.add(subject);
    }
  }

  const readStream = (stream: string) => {
    streams.add(stream);
    api.add(`${JS_API}.STREAM.INFO.${stream}`);
  };
  for (const spec of BUCKETS) {
    const bucket = bucketName(spec.bucket, prefix);
    const stream = bucketStream(bucket);
    const mine = spec.grants.filter((g) => applies(g.role, identity));
    if (mine.length === 0) continue;
    readStream(stream);
    for (const g of mine) {
      const keys = `$KV.${bucket}.${grantKeys(g, identity)}`;
      api.add(`${JS_API}.DIRECT.GET.${stream}.${keys}`);
      if (g.access === "write") kvWrites.add(keys);
      if (g.access === "watch") {
        api.add(`${JS_API}.CONSUMER.CREATE.${stream}.*.${keys}`);
        api.add(`${JS_API}.CONSUMER.INFO.${stream}.*`);
        replies.add(`$JS.FC.${stream}.>`);
        deliveries = true;
      }
    }
    if (spec.recordOwner !== undefined) {
      const owner = spec.recordOwner;
      // A connector pings its own server's instances; anyone else any server's
      // (`$SRV.PING.connector-<server>.<id>`: the accounts layout imports one per server).
      const ownerName =
        owner !== "connector" ? owner : identity.role === "connector" ? identityName(identity) : "*";
      pings.set(`$SRV.PING.${ownerName}.*`, owner);
    }
  }
  for (const spec of STREAMS) {
    const names = subjects.streams[spec.stream];
    const stream = names.name;
    const writes =
      [...publishes].some(([subject, stored]) => stored && names.subjects.some((s) => covers(s, subject))) ||
      spec.writers.some((w) => applies(w.role, identity));
    for (const writer of spec.writers.filter((w) => applies(w.role, identity))) {
      publishes.set(withPrefix(writer.subject, prefix), true);
    }
    if (writes) readStream(stream);
    for (const reader of spec.readers.filter((r) => applies(r.role, identity))) {
      readStream(stream);
      const filter = withPrefix(reader.filter, prefix);
      if (reader.durable !== undefined) {
        // The provisioner made it: fetch, ack, look at it; never create, change or delete it.
        api.add(`${JS_API}.CONSUMER.INFO.${stream}.${reader.durable}`);
        api.add(`${JS_API}.CONSUMER.MSG.NEXT.${stream}.${reader.durable}`);
        replies.add(`$JS.ACK.${stream}.${reader.durable}.>`);
      } else {
        api.add(`${JS_API}.CONSUMER.CREATE.${stream}.*.${filter}`);
        api.add(`${JS_API}.CONSUMER.INFO.${stream}.*`);
        replies.add(`$JS.FC.${stream}.>`);
        deliveries = true;
      }
    }
    const direct = spec.directReaders;
    if (direct && direct.roles.some((role) => applies(role, identity))) {
      readStream(stream);
      const subject = withPrefix(direct.subject, prefix).replaceAll("<name>", identityName(identity));
      api.add(`${JS_API}.DIRECT.GET.${stream}.${subject}`);
    }
  }

  const sorted = (set: Iterable<string>) => Object.freeze([...set].sort());
  return Object.freeze({
    serves: sorted(serves),
    requests: sorted(requests),
    publishes: Object.freeze(
      [...publishes]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([subject, stored]) => Object.freeze({ subject, stored })),
    ),
    subscribes: sorted(subscribes),
    jetStreamApi: sorted(api),
    kvWrites: sorted(kvWrites),
    jetStreamReplies: sorted(replies),
    pings: Object.freeze(
      [...pings].sort(([a], [b]) => (a < b ? -1 : 1)).map(([subject, ownerRole]) => ({ subject, ownerRole })),
    ),
    streams: sorted(streams),
    receivesDeliveries: deliveries,
  });
}

/** Whether NATS subject pattern `pattern` matches every subject `subject` can be (token wildcards). */
export function covers(pattern: string, subject: string): boolean {
  const p = pattern.split(".");
  const s = subject.split(".");
  for (let i = 0; i < p.length; i++) {
    if (p[i] === ">") return s.length > i;
    if (i >= s.length) return false;
    if (p[i] === "*") {
      if (s[i] === ">") return false;
      continue;
    }
    if (p[i] !== s[i]) return false;
  }
  return p.length === s.length;
}

/** The JetStream API subject `subject` (`$JS.API.…`) as the identity's account names it. */
export function localJetStreamApi(subject: string): string {
  return subject.startsWith(`${JS_API}.`) ? `${LOCAL_JS_API}${subject.slice(JS_API.length)}` : subject;
}

/** A KV write subject (`$KV.…`) as nats.js sends it with the local API prefix. */
export function localKvWrite(subject: string): string {
  return `${LOCAL_JS_API}.${subject}`;
}

/**
 * The allow lists of one identity under one prefix, in its own account's subjects, sorted and
 * without duplicates. The provisioner lives where the streams are and uses JetStream's own API.
 */
export function permissionsFor(identity: Identity | Role, subjects: Subjects): Permissions {
  const id = typeof identity === "string" ? identityOf(identity) : identity;
  if (id.role === "provisioner") return provisionerPermissions(subjects);
  const use = identityUse(id, subjects);
  const publish = new Set<string>([
    ...use.requests,
    ...use.publishes.map((p) => p.subject),
    ...use.jetStreamApi.map(localJetStreamApi),
    ...use.kvWrites.map(localKvWrite),
    ...use.jetStreamReplies,
    ...use.pings.map((p) => p.subject),
  ]);
  const subscribe = new Set<string>([
    `${inboxPrefix(subjects.prefix, id)}.>`,
    ...use.serves,
    ...use.subscribes,
  ]);
  const serves = use.serves.length > 0;
  if (serves) {
    // Every service is a NATS micro service (`$SRV.PING|INFO|STATS[.<name>[.<id>]]`).
    const name = identityName(id);
    for (const pattern of ["$SRV.*", `$SRV.*.${name}`, `$SRV.*.${name}.*`]) subscribe.add(pattern);
  }
  return Object.freeze({
    publish: Object.freeze([...publish].sort()),
    subscribe: Object.freeze([...subscribe].sort()),
    allowResponses: serves,
  });
}

/** The streams of every JetStream asset under `subjects`' prefix. */
export function assetStreams(subjects: Subjects): string[] {
  return [
    ...BUCKETS.map((spec) => bucketStream(bucketName(spec.bucket, subjects.prefix))),
    ...STREAMS.map((spec) => subjects.streams[spec.stream].name),
  ].sort();
}

/**
 * The provisioner's: create, update and look at every asset's stream and the durable consumers
 * the services read, nothing else (no delete, no purge, no message access).
 */
function provisionerPermissions(subjects: Subjects): Permissions {
  const publish = new Set<string>();
  for (const stream of assetStreams(subjects)) {
    for (const verb of ["INFO", "CREATE", "UPDATE"]) publish.add(`${JS_API}.STREAM.${verb}.${stream}`);
  }
  for (const spec of STREAMS) {
    const stream = subjects.streams[spec.stream].name;
    for (const reader of spec.readers) {
      if (reader.durable === undefined) continue;
      const filter = withPrefix(reader.filter, subjects.prefix);
      publish.add(`${JS_API}.CONSUMER.INFO.${stream}.${reader.durable}`);
      publish.add(`${JS_API}.CONSUMER.CREATE.${stream}.${reader.durable}.${filter}`);
      publish.add(`${JS_API}.CONSUMER.CREATE.${stream}.${reader.durable}`);
    }
  }
  return Object.freeze({
    publish: Object.freeze([...publish].sort()),
    subscribe: Object.freeze([`${inboxPrefix(subjects.prefix, "provisioner")}.>`]),
    allowResponses: false,
  });
}

/**
 * Every subject, queue group, KV bucket and stream name on the bus, derived from one prefix
 * (`toolbus`, or `TOOLBUS_PREFIX` for a tenant or a test), plus `SUBJECTS`: the data table of
 * the contract's subjects that README.md mirrors.
 */
import { CallRelayKind } from "./schemas/connector.js";
import { MAX_SERVER_NAME_LENGTH, SERVER_NAME_PATTERN } from "./schemas/primitives.js";

export const DEFAULT_PREFIX = "toolbus";
export const MAX_PREFIX_LENGTH = 64;
const PREFIX_PATTERN = /^[A-Za-z0-9_-]+$/;

/** Returns the prefix if it is usable in subjects and JetStream names; throws otherwise. */
export function validatePrefix(prefix: string): string {
  if (prefix.length === 0 || prefix.length > MAX_PREFIX_LENGTH || !PREFIX_PATTERN.test(prefix)) {
    throw new Error(
      `Invalid toolbus subject prefix ${JSON.stringify(prefix)}: use 1 to ${MAX_PREFIX_LENGTH} characters ` +
        "from A-Z, a-z, 0-9, '_' and '-' (no dots, wildcards or spaces), e.g. TOOLBUS_PREFIX=tenant_a",
    );
  }
  return prefix;
}

/** `TOOLBUS_PREFIX` when set and non-empty, else `toolbus`; throws on an invalid value. */
export function prefixFromEnv(env: Readonly<Record<string, string | undefined>>): string {
  const value = env.TOOLBUS_PREFIX;
  return value === undefined || value === "" ? DEFAULT_PREFIX : validatePrefix(value);
}

/** Queue groups: request/reply subjects are served in a group named after the service. */
export const QueueGroup = {
  catalog: "catalog",
  dispatcher: "dispatcher",
  approvals: "approvals",
  memory: "memory",
  gateway: "gateway",
} as const;
export type QueueGroup = (typeof QueueGroup)[keyof typeof QueueGroup];

/**
 * The identities that connect to NATS: the five services, a connector (one identity per MCP
 * server, held by the catalog process that runs that server), the operator's CLI, an agent
 * runtime, and the provisioner that creates the JetStream assets before anything runs.
 */
export const Role = {
  ...QueueGroup,
  connector: "connector",
  cli: "cli",
  agent: "agent",
  provisioner: "provisioner",
} as const;
export type Role = (typeof Role)[keyof typeof Role];

export const CATALOG_KEY_PREFIX = "server.";

/** The catalog KV key of a server's entry: `server.<name>`. */
export function catalogKey(server: string): string {
  return `${CATALOG_KEY_PREFIX}${checkedServer(server)}`;
}

/** The server a catalog KV key belongs to, or null for a key that is not a server entry. */
export function serverFromCatalogKey(key: string): string | null {
  if (!key.startsWith(CATALOG_KEY_PREFIX)) return null;
  const server = key.slice(CATALOG_KEY_PREFIX.length);
  return SERVER_NAME_PATTERN.test(server) ? server : null;
}

/**
 * A value as one subject token. Ids made of `[A-Za-z0-9_-]` are used as they are; any other
 * id (dots, spaces, wildcards, non-ASCII) becomes `~` + base64url of its UTF-8 bytes, which
 * no plain id can collide with.
 */
export function subjectToken(value: string): string {
  if (value.length === 0) throw new Error("A subject token cannot be empty: pass a non-empty id");
  if (PREFIX_PATTERN.test(value)) return value;
  let binary = "";
  for (const byte of new TextEncoder().encode(value)) binary += String.fromCharCode(byte);
  return `~${btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "")}`;
}

/**
 * A value as one KV key token: {@link subjectToken} with `=` in place of `~`, which KV keys do
 * not allow (`=` they do, and a plain id never holds it).
 */
export function kvKeyToken(value: string): string {
  const token = subjectToken(value);
  return token.startsWith("~") ? `=${token.slice(1)}` : token;
}

function checkedServer(server: string): string {
  if (!SERVER_NAME_PATTERN.test(server) || server.length > MAX_SERVER_NAME_LENGTH) {
    throw new Error(
      `Invalid MCP server name ${JSON.stringify(server)}: must match pattern ${SERVER_NAME_PATTERN.source} (at most ${MAX_SERVER_NAME_LENGTH} characters)`,
    );
  }
  return server;
}

function checkedRelayKind(kind: CallRelayKind): CallRelayKind {
  const kinds: readonly string[] = Object.values(CallRelayKind);
  if (!kinds.includes(kind)) {
    throw new Error(`Unknown call relay kind ${JSON.stringify(kind)}: use one of ${kinds.join(", ")}`);
  }
  return kind;
}

function jetStreamName(prefix: string, suffix: string): string {
  return `${prefix.toUpperCase().replaceAll("-", "_")}_${suffix}`;
}

/** A recipient or id of a stored large reply: one subject token of plain characters. */
function checkedLargeReplyToken(token: string): string {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(token)) {
    throw new Error(`Invalid large-reply subject token ${JSON.stringify(token)}: use 1 to 64 of A-Za-z0-9_-`);
  }
  return token;
}

export interface StreamNames {
  readonly name: string;
  readonly subjects: readonly string[];
}

/** Every name on the bus for one prefix. Functions validate their argument and throw. */
export interface Subjects {
  readonly prefix: string;
  readonly catalogGet: string;
  readonly catalogRefresh: string;
  readonly catalogResourcesList: string;
  readonly catalogResourceTemplatesList: string;
  readonly catalogResourcesRead: string;
  readonly catalogSearch: string;
  readonly catalogPromptsList: string;
  readonly catalogPromptsGet: string;
  readonly catalogCompletionComplete: string;
  /** `<prefix>.events.>`: everything on the events stream. */
  readonly events: string;
  serverStatus(server: string): string;
  /** `<prefix>.events.server.*`: every server's status events. */
  readonly serverStatusAll: string;
  readonly startupComplete: string;
  readonly catalogEvent: string;
  readonly promptsEvent: string;
  readonly dispatchCall: string;
  readonly dispatchHistory: string;
  readonly callBegin: string;
  readonly callEnd: string;
  /** `<prefix>.events.call.>`: every call's begin and end. */
  readonly callEvents: string;
  readonly approvalsDecide: string;
  readonly approvalsPostToolUse: string;
  readonly approvalsPending: string;
  readonly approvalsList: string;
  readonly approvalsResolve: string;
  readonly approvalsResolved: string;
  readonly approvalsCancel: string;
  readonly approvalsForgetThreads: string;
  readonly memoryMessage: string;
  readonly memoryStrip: string;
  readonly memoryUsage: string;
  connectorCall(server: string): string;
  /** The dispatcher tells the connector running a call of `server` to stop it. */
  connectorCancel(server: string): string;
  /** `<prefix>.connector.*.cancel`: the cancellations of every server's calls. */
  readonly connectorCancelAll: string;
  /** The caller cancelled the call; the callId goes through {@link subjectToken}. */
  callCancel(callId: string): string;
  /** `<prefix>.calls.*.cancel`: every call's cancellation, for the dispatchers. */
  readonly callCancelAll: string;
  /**
   * What `server` sends its caller during call `callId`: `<prefix>.calls.<callId>.<server>.<kind>`
   * (the callId through {@link subjectToken}). The server is in the subject so that a connector's
   * identity may relay for its own server only.
   */
  callRelay(callId: string, server: string, kind: CallRelayKind): string;
  /** `<prefix>.calls.<callId>.<server>.*`: every relay of one call. */
  callRelayAll(callId: string, server: string): string;
  /** `<prefix>.calls.<callId>.*.<kind>`: one kind of relay of a call, from whichever server runs it. */
  callRelayAnyServer(callId: string, kind: CallRelayKind): string;
  /** `<prefix>.calls.*.*.<kind>`: one kind of relay of every call (an edge that relays them). */
  callRelayEvery(kind: CallRelayKind): string;
  /**
   * KV buckets. `callHistory`: the dispatcher's index of call events by thread (key
   * `<thread>.<callId>.<begin|end>`, each id through {@link kvKeyToken}; value: the event's
   * sequence in the events stream), so `dispatch.history` reads a thread's events by key.
   */
  readonly kv: { readonly catalog: string; readonly approvalGrants: string; readonly callHistory: string };
  /**
   * JetStream streams. `large` (`<PREFIX>_LARGE`, subjects `<prefix>.large.>`): replies
   * larger than one NATS message, stored in chunks by the service that answers under
   * `<prefix>.large.<recipient role>.<id>.<index>` and read by direct get by the caller the reply
   * header names them to; its max age removes them.
   */
  /**
   * `<prefix>.large.<recipient>.<id>`: one stored large reply, whose chunks are its subjects
   * `.0`, `.1`, …; `recipient` is a role, or `_` for a reply subject that is no role's inbox.
   */
  largeReply(recipient: string, id: string): string;
  readonly streams: {
    readonly events: StreamNames;
    readonly memory: StreamNames;
    readonly large: StreamNames;
  };
}

export function createSubjects(prefix: string = DEFAULT_PREFIX): Subjects {
  const p = validatePrefix(prefix);
  return Object.freeze({
    prefix: p,
    catalogGet: `${p}.catalog.get`,
    catalogRefresh: `${p}.catalog.refresh`,
    catalogResourcesList: `${p}.catalog.resources.list`,
    catalogResourceTemplatesList: `${p}.catalog.resource_templates.list`,
    catalogResourcesRead: `${p}.catalog.resources.read`,
    catalogSearch: `${p}.catalog.search`,
    catalogPromptsList: `${p}.catalog.prompts.list`,
    catalogPromptsGet: `${p}.catalog.prompts.get`,
    catalogCompletionComplete: `${p}.catalog.completion.complete`,
    events: `${p}.events.>`,
    serverStatus: (server: string) => `${p}.events.server.${checkedServer(server)}`,
    serverStatusAll: `${p}.events.server.*`,
    startupComplete: `${p}.events.startup_complete`,
    catalogEvent: `${p}.events.catalog`,
    promptsEvent: `${p}.events.prompts`,
    dispatchCall: `${p}.dispatch.call`,
    dispatchHistory: `${p}.dispatch.history`,
    callBegin: `${p}.events.call.begin`,
    callEnd: `${p}.events.call.end`,
    callEvents: `${p}.events.call.>`,
    approvalsDecide: `${p}.approvals.decide`,
    approvalsPostToolUse: `${p}.approvals.post_tool_use`,
    approvalsPending: `${p}.approvals.pending`,
    approvalsList: `${p}.approvals.list`,
    approvalsResolve: `${p}.approvals.resolve`,
    approvalsResolved: `${p}.approvals.resolved`,
    approvalsCancel: `${p}.approvals.cancel`,
    approvalsForgetThreads: `${p}.approvals.forget_threads`,
    memoryMessage: `${p}.memory.message`,
    memoryStrip: `${p}.memory.strip`,
    memoryUsage: `${p}.memory.usage`,
    connectorCall: (server: string) => `${p}.connector.${checkedServer(server)}.call`,
    connectorCancel: (server: string) => `${p}.connector.${checkedServer(server)}.cancel`,
    connectorCancelAll: `${p}.connector.*.cancel`,
    callCancel: (callId: string) => `${p}.calls.${subjectToken(callId)}.cancel`,
    callCancelAll: `${p}.calls.*.cancel`,
    callRelay: (callId: string, server: string, kind: CallRelayKind) =>
      `${p}.calls.${subjectToken(callId)}.${checkedServer(server)}.${checkedRelayKind(kind)}`,
    callRelayAll: (callId: string, server: string) =>
      `${p}.calls.${subjectToken(callId)}.${checkedServer(server)}.*`,
    callRelayAnyServer: (callId: string, kind: CallRelayKind) =>
      `${p}.calls.${subjectToken(callId)}.*.${checkedRelayKind(kind)}`,
    callRelayEvery: (kind: CallRelayKind) => `${p}.calls.*.*.${checkedRelayKind(kind)}`,
    largeReply: (recipient: string, id: string) =>
      `${p}.large.${checkedLargeReplyToken(recipient)}.${checkedLargeReplyToken(id)}`,
    kv: Object.freeze({
      catalog: `${p}_catalog`,
      approvalGrants: `${p}_approval_grants`,
      callHistory: `${p}_call_history`,
    }),
    streams: Object.freeze({
      events: Object.freeze({ name: jetStreamName(p, "EVENTS"), subjects: Object.freeze([`${p}.events.>`]) }),
      memory: Object.freeze({
        name: jetStreamName(p, "MEMORY"),
        subjects: Object.freeze([`${p}.memory.message`]),
      }),
      large: Object.freeze({ name: jetStreamName(p, "LARGE"), subjects: Object.freeze([`${p}.large.>`]) }),
    }),
  });
}

/** `req/reply`: served in a queue group; `event`: core NATS publish; `stream`: JetStream. */
export const SubjectKind = { reqReply: "req/reply", event: "event", stream: "stream" } as const;
export type SubjectKind = (typeof SubjectKind)[keyof typeof SubjectKind];

export interface SubjectSpec {
  /** With the default prefix; `<server>` and `<callId>` are placeholders. */
  readonly subject: string;
  readonly kind: SubjectKind;
  /** The request (or event payload) schema, named without the `Schema` suffix. */
  readonly request: string;
  /** The reply's result schema (inside the envelope), or null for events. */
  readonly reply: string | null;
  /**
   * The identity that serves it (req/reply), publishes it (events), or consumes it
   * (memory.message). `connector` with a `<server>` in the subject: each server's own connector.
   */
  readonly owner: Role;
  /** Who else may use it: request it (req/reply), subscribe to it (events), publish it (memory.message). */
  readonly users: readonly Role[];
  readonly description: string;
}

const spec = (
  subject: string,
  kind: SubjectKind,
  request: string,
  reply: string | null,
  owner: Role,
  users: readonly Role[],
  description: string,
): SubjectSpec =>
  Object.freeze({ subject, kind, request, reply, owner, users: Object.freeze(users), description });

/** The contract's subjects, with the default prefix. README.md mirrors this table (a test checks). */
// biome-ignore format: a table reads best one row per line
export const SUBJECTS: readonly SubjectSpec[] = Object.freeze([
  spec("toolbus.catalog.get", "req/reply", "CatalogGetRequest", "CatalogSnapshot", "catalog", ["gateway", "cli", "agent"], "The normalized catalog: servers, tools, and the direct and deferred flat names."),
  spec("toolbus.catalog.refresh", "req/reply", "CatalogRefreshRequest", "CatalogRefreshResult", "catalog", ["gateway", "cli"], "Re-list one server, or every server, and answer the catalog revision after it."),
  spec("toolbus.catalog.resources.list", "req/reply", "ResourcesListRequest", "ResourcesListResult", "catalog", ["gateway", "dispatcher", "agent"], "Resources of one server (one page), or of every server (sorted by server, no cursor)."),
  spec("toolbus.catalog.resource_templates.list", "req/reply", "ResourceTemplatesListRequest", "ResourceTemplatesListResult", "catalog", ["gateway", "dispatcher", "agent"], "Resource templates, paged like resources."),
  spec("toolbus.catalog.resources.read", "req/reply", "ResourcesReadRequest", "ResourcesReadResult", "catalog", ["gateway", "dispatcher", "agent"], "Read one resource; originCallId names the call that produced the URI."),
  spec("toolbus.catalog.search", "req/reply", "CatalogSearchRequest", "CatalogSearchResult", "catalog", ["gateway", "cli", "agent"], "Tools whose search text matches a query, best first, for tool_search-style consumers."),
  spec("toolbus.catalog.prompts.list", "req/reply", "PromptsListRequest", "PromptsListResult", "catalog", ["gateway", "agent"], "Prompts of one server (one page), or of every server that declares prompts (sorted by server, no cursor)."),
  spec("toolbus.catalog.prompts.get", "req/reply", "PromptsGetRequest", "PromptsGetResult", "catalog", ["gateway", "agent"], "Get one prompt by its raw name from its server, with its arguments filled in."),
  spec("toolbus.catalog.completion.complete", "req/reply", "CompletionCompleteRequest", "CompleteResult", "catalog", ["gateway", "agent"], "Candidate values for a prompt or resource template argument; empty when the server declares no completions."),
  spec("toolbus.events.server.<server>", "stream", "ServerStatusEvent", null, "connector", ["gateway", "cli"], "A server's startup state: starting, then ready, failed or cancelled."),
  spec("toolbus.events.startup_complete", "stream", "StartupCompleteEvent", null, "catalog", ["gateway", "cli"], "The startup summary, once every started server has settled."),
  spec("toolbus.events.catalog", "stream", "CatalogEvent", null, "connector", ["gateway", "cli"], "The catalog revision moved; names the servers whose tools changed."),
  spec("toolbus.events.prompts", "stream", "PromptsChangedEvent", null, "connector", ["gateway", "cli"], "A server said its prompts changed (prompts/list_changed); list them again."),
  spec("toolbus.dispatch.call", "req/reply", "ToolCallRequest", "ToolCallReply", "dispatcher", ["gateway", "cli", "agent"], "Call a tool by its model-visible name: the whole call path, answered with the model projection."),
  spec("toolbus.dispatch.history", "req/reply", "DispatchHistoryRequest", "DispatchHistoryResult", "dispatcher", ["gateway", "cli", "agent"], "The McpToolCallItems of one thread's calls, in the order they began, read from the events stream by the thread's index."),
  spec("toolbus.events.call.begin", "stream", "CallBeginEvent", null, "dispatcher", ["gateway", "cli"], "A call began (before its approval); one per call whose arguments parsed."),
  spec("toolbus.events.call.end", "stream", "CallEndEvent", null, "dispatcher", ["gateway", "cli"], "A call ended, same callId as its begin; the result copy is capped at 1 MiB."),
  spec("toolbus.approvals.decide", "req/reply", "ApprovalDecideRequest", "ApprovalDecideResult", "approvals", ["dispatcher"], "Decide a call: mode and annotations, remembered grants, PreToolUse and PermissionRequest hooks, a human."),
  spec("toolbus.approvals.post_tool_use", "req/reply", "PostToolUseRequest", "PostToolUseResult", "approvals", ["dispatcher"], "Run the PostToolUse hooks matching the hook name; sent only when one matches."),
  spec("toolbus.approvals.pending", "event", "ApprovalRequest", null, "approvals", ["gateway", "cli"], "A call is waiting for a human."),
  spec("toolbus.approvals.list", "req/reply", "ApprovalsListRequest", "ApprovalsListResult", "approvals", ["gateway", "cli"], "The requests waiting for a human, a page at a time (`limit`, `cursor`)."),
  spec("toolbus.approvals.resolve", "req/reply", "ApprovalResolveRequest", "ApprovalResolveResult", "approvals", ["gateway", "cli"], "A human's answer, recorded as `by` (the edge's principal); twice or after expiry is bad_request."),
  spec("toolbus.approvals.resolved", "event", "ApprovalResolvedEvent", null, "approvals", ["gateway", "cli"], "A pending request was answered: by whom, with which decision."),
  spec("toolbus.approvals.cancel", "req/reply", "ApprovalCancelRequest", "ApprovalCancelResult", "approvals", ["gateway", "dispatcher"], "Internal: withdraw the pending request of a call whose caller went away."),
  spec("toolbus.approvals.forget_threads", "req/reply", "ForgetThreadsRequest", "ForgetThreadsResult", "approvals", ["gateway"], "Internal: forget the session grants (Allow for this session) of threads whose MCP session ended."),
  spec("toolbus.memory.message", "stream", "MemoryMessage", null, "memory", ["agent"], "An assistant message whose citations are counted, once per messageId."),
  spec("toolbus.memory.strip", "req/reply", "MemoryStripRequest", "MemoryStripResult", "memory", ["gateway", "cli", "agent"], "Hide citation markup and parse the citation."),
  spec("toolbus.memory.usage", "req/reply", "MemoryUsageRequest", "MemoryUsageResult", "memory", ["gateway", "cli", "agent"], "Usage counts of cited rollouts."),
  spec("toolbus.connector.<server>.call", "req/reply", "ConnectorCallRequest", "ConnectorCallResult", "connector", ["dispatcher"], "Internal: the raw tools/call on one server, refused if its revision moved since preparation."),
  spec("toolbus.connector.<server>.cancel", "event", "CallCancel", null, "dispatcher", ["connector"], "Internal: stop a call; the connector running it sends its server notifications/cancelled."),
  spec("toolbus.calls.<callId>.cancel", "event", "CallCancel", null, "gateway", ["dispatcher"], "Internal: the caller cancelled the call or went away; the dispatcher running it withdraws its approval or stops its connector call."),
  spec("toolbus.calls.<callId>.<server>.progress", "event", "CallProgress", null, "connector", ["gateway", "cli"], "Internal: a server's progress notification during a call."),
  spec("toolbus.calls.<callId>.<server>.logging", "event", "CallLogging", null, "connector", ["gateway"], "Internal: a server's log message during a call."),
  spec("toolbus.calls.<callId>.<server>.elicitation", "req/reply", "CallElicitationRequest", "CallElicitationResult", "gateway", ["connector"], "Internal: a server asks the caller something during a call; the answer goes back to the server."),
  spec("toolbus.calls.<callId>.<server>.sampling", "req/reply", "CallSamplingRequest", "CallSamplingResult", "gateway", ["connector"], "Internal: a server asks the caller's model for a message during a call (sampling/createMessage); the answer goes back to the server."),
  spec("toolbus.calls.<callId>.<server>.input", "req/reply", "CallInputRequest", "CallInputResult", "gateway", ["connector"], "Internal: a 2026-07-28 server's round of questions during a call (input_required), under its own keys; the answers go back to the server with the call."),
]);

/** The toolbus.toml tables besides `[mcp_servers]`: `[gateway]`, `[catalog]`, `[approvals]`, `[memory]`, `[bus]`, with every default. */
import { DEFAULT_LARGE_REPLIES_IN_FLIGHT_BYTES, DEFAULT_NAME_LIMIT, MIN_NAME_LIMIT } from "@toolbus/protocol";
import { z } from "zod";
import { secondsToMs } from "./mcp-server.js";
import { type OAuthConfig, OAuthTable, PublicUrl } from "./oauth.js";
import { type SignInConfig, SignInTable, signInTransportProblem } from "./signin.js";
import { RunAs, Sandbox } from "./toml-server.js";
import { ViewsTable } from "./views.js";

export interface GatewayConfig {
  /** 0 = any free port. `TOOLBUS_HTTP_PORT` overrides it (see loadToolbusConfig). */
  port: number;
  host: string;
  /** How the MCP edge names tools. */
  naming: "prefixed" | "conditional";
  /** Name of the env var holding the accepted bearer tokens (comma- or space-separated); absent = no auth. */
  tokensEnv?: string;
  /** Host names (port ignored) the gateway answers to, against DNS rebinding. */
  allowedHosts: string[];
  /**
   * Serve HTTP on an address other than loopback without tokens. Off: such a start is refused
   * (gateway and approvals inbox alike).
   */
  allowUnauthenticated: boolean;
  /**
   * Put a call's approval to the MCP client that made the call (form elicitation), as the
   * reference does. Off: only approvers decide (the inbox, `/v1/approvals`, the CLI).
   */
  elicitApprovals: boolean;
  /**
   * Offer `list_mcp_resources`, `list_mcp_resource_templates` and `read_mcp_resource` as tools
   * (the reference's resource tools), for MCP clients that never read resources themselves.
   */
  resourceTools: boolean;
  /** MCP sessions one client (token, or everyone when auth is off) holds on a replica. */
  maxSessionsPerClient: number;
  /** JSON-RPC messages in one POST to `/mcp`. */
  maxBatchSize: number;
  /**
   * A call of an MCP client that takes tasks (2026-07-28's tasks extension) becomes a task once
   * it has run this long without an answer (or at once when it waits for a human).
   */
  taskAfterMs: number;
  /** Open event streams (`/v1/events`, `/v1/approvals/events`, MCP GET streams) per process. */
  maxStreams: number;
  /** Open event streams one client holds. */
  maxStreamsPerClient: number;
  /**
   * The origin clients reach the gateway at (`https://toolbus.example.com` behind a proxy); the
   * canonical URI of `/mcp` and of the rest is built on it. Absent: from each request's Host.
   */
  publicUrl?: string;
  /** `[gateway.oauth]`: OAuth access tokens accepted beside the static tokens; absent: off. */
  oauth?: OAuthConfig;
  /** `[gateway.signin]`: browser sign-in for the console and the inbox, at the issuer of `oauth`; absent: off. */
  signin?: SignInConfig;
}

/** The `[gateway]` limits' defaults. */
export const DEFAULT_EDGE_LIMITS = Object.freeze({
  maxSessionsPerClient: 1_000,
  maxBatchSize: 50,
  maxStreams: 2_000,
  maxStreamsPerClient: 200,
  taskAfterMs: 2_000,
});

/**
 * Naming (shaped as @toolbus/protocol's `NamingOptions`: `namingOptionsOf` picks it for
 * `normalizeCatalog` and the catalog bucket) and how stdio servers are started.
 */
export interface CatalogConfig {
  /** Byte limit of a flat tool name (`ns__name`), at least MIN_NAME_LIMIT; 128 reproduces Codex. */
  nameLimit: number;
  /** Give namespaces the `mcp__` prefix (false: no server gets it). */
  prefixMcp: boolean;
  /** With `prefixMcp`, the servers that do not get the prefix. */
  nonPrefixedServers?: string[];
  /**
   * Absolute: where a stdio server without `cwd` gets its own working directory,
   * `<serversDir>/<name>`. Absent: under toolbus's private state directory (see the catalog).
   */
  serversDir?: string;
  /** The user stdio servers run as unless they say otherwise (`run_as`). */
  runAs?: string;
  /** The wrapper command stdio servers are started through unless they say otherwise (`sandbox`). */
  sandbox?: string[];
}

/** The naming part of `[catalog]`, which the catalog bucket publishes: nothing about processes. */
export function namingOptionsOf(
  catalog: CatalogConfig,
): Pick<CatalogConfig, "nameLimit" | "prefixMcp" | "nonPrefixedServers"> {
  return {
    nameLimit: catalog.nameLimit,
    prefixMcp: catalog.prefixMcp,
    ...(catalog.nonPrefixedServers === undefined ? {} : { nonPrefixedServers: catalog.nonPrefixedServers }),
  };
}

export interface ApprovalsConfig {
  /** How long a call waits for a human before it is `timed_out`. */
  timeoutMs: number;
  /** Absolute path of a hooks JSON file in Claude Code's shape (relative paths are resolved against the config file). */
  hooksPath?: string;
  /** HTTP inbox port when approvals runs as its own process. */
  port: number;
  /** The most command hooks running at once across the service; more wait for a slot. */
  maxConcurrentHooks: number;
  /**
   * Whether the principal that asked for a call may answer its approval (`self_approve`). Off
   * by default: an authenticated caller's call waits for someone else. A caller the edge did not
   * authenticate (auth off: one user on loopback) is asked as before.
   */
  selfApprove: boolean;
}

/** The memory service's ingest settings; its `MEMORY_*` environment variables override them. */
export interface MemoryConfig {
  /** The most messages one batch (one transaction) takes from TOOLBUS_MEMORY. */
  batchSize: number;
  /** Deliveries of a message that keeps failing before it is parked. */
  maxDeliveries: number;
  /** First delay before a failing message is redelivered; doubles per delivery, at most 60 s. */
  redeliveryDelayMs: number;
  /** How long the stream waits for an ack before redelivering. */
  ackWaitMs: number;
}

export const DEFAULT_MEMORY_CONFIG: Readonly<MemoryConfig> = Object.freeze({
  batchSize: 500,
  maxDeliveries: 5,
  redeliveryDelayMs: 1_000,
  ackWaitMs: 30_000,
});

/** How long a JetStream stream keeps a message, and how many bytes it keeps in all (older go first). */
export interface StreamLimits {
  maxAgeMs: number;
  maxBytes: number;
}

/** Limits on what the bus keeps in JetStream, so no stream or store grows without end. */
export interface BusConfig {
  /** TOOLBUS_EVENTS: status and call lifecycle events (an end event carries up to 1 MiB). */
  events: StreamLimits;
  /** TOOLBUS_MEMORY: assistant messages waiting to be counted; an outage longer than maxAge loses them. */
  memory: StreamLimits;
  /** The stream holding replies larger than one NATS message until their caller has read them. */
  largeReplies: StreamLimits;
  /**
   * The bytes of large replies one process stores or reads at once; one that does not fit waits
   * its turn for a while, then is refused `payload_too_large`.
   */
  largeRepliesInFlightBytes: number;
  /**
   * The largest reply toolbus carries (a tool's result, read from its MCP server): one larger
   * than NATS max_payload travels through the large-replies store; a larger one is refused.
   */
  maxReplyBytes: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const GIB = 1024 * 1024 * 1024;
export const DEFAULT_BUS_CONFIG: Readonly<BusConfig> = Object.freeze({
  events: Object.freeze({ maxAgeMs: 7 * DAY_MS, maxBytes: GIB }),
  memory: Object.freeze({ maxAgeMs: 7 * DAY_MS, maxBytes: GIB }),
  largeReplies: Object.freeze({ maxAgeMs: 10 * 60 * 1000, maxBytes: GIB }),
  largeRepliesInFlightBytes: DEFAULT_LARGE_REPLIES_IN_FLIGHT_BYTES,
  maxReplyBytes: 16 * 1024 * 1024,
});
/** Streams that take events de-duplicate retries for 5 minutes: a shorter max age is refused by JetStream. */
export const MIN_STREAM_MAX_AGE_SEC = 600;
/** A stream must hold at least one message of NATS's default max_payload. */
export const MIN_STREAM_MAX_BYTES = 1024 * 1024;
/** A large reply is read within moments of being stored; less than this risks losing it to a slow caller. */
export const MIN_LARGE_REPLY_TTL_SEC = 10;

export const DEFAULT_GATEWAY_PORT = 8080;
export const DEFAULT_APPROVALS_PORT = 8081;
/** Command hooks running at once per approvals service: enough for a busy agent, not a fork bomb. */
export const DEFAULT_MAX_CONCURRENT_HOOKS = 16;
/**
 * 10 minutes: long enough for a person to notice the prompt, short enough that an abandoned call does not hold a
 * dispatcher request (and the model's turn) indefinitely. Codex itself waits forever.
 */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 600_000;
export const DEFAULT_ALLOWED_HOSTS: readonly string[] = ["localhost", "127.0.0.1", "[::1]"];

const NonEmpty = z.string().min(1, { error: "must not be empty" });
const Port = z.int().min(0, { error: "must be a port from 0 to 65535" }).max(65535, {
  error: "must be a port from 0 to 65535",
});
const Count = z.int().min(1, { error: "must be a whole number, at least 1" });
const Seconds = z.number().gt(0, { error: "must be a positive number of seconds" });

const GatewayTable = z
  .strictObject({
    port: Port.default(DEFAULT_GATEWAY_PORT),
    host: NonEmpty.default("127.0.0.1"),
    naming: z.enum(["prefixed", "conditional"]).default("prefixed"),
    tokens_env: NonEmpty.optional(),
    allowed_hosts: z.array(NonEmpty).default(() => [...DEFAULT_ALLOWED_HOSTS]),
    allow_unauthenticated: z.boolean().default(false),
    elicit_approvals: z.boolean().default(true),
    resource_tools: z.boolean().default(true),
    max_sessions_per_client: Count.default(DEFAULT_EDGE_LIMITS.maxSessionsPerClient),
    max_batch_size: Count.default(DEFAULT_EDGE_LIMITS.maxBatchSize),
    max_streams: Count.default(DEFAULT_EDGE_LIMITS.maxStreams),
    max_streams_per_client: Count.default(DEFAULT_EDGE_LIMITS.maxStreamsPerClient),
    task_after_sec: Seconds.default(DEFAULT_EDGE_LIMITS.taskAfterMs / 1000),
    public_url: PublicUrl.optional(),
    oauth: OAuthTable.optional(),
    signin: SignInTable.optional(),
  })
  .check((ctx) => {
    // Browser sign-in: at the issuer [gateway.oauth] trusts, and with a cookie that needs https.
    const { signin, oauth } = ctx.value;
    if (signin === undefined) return;
    if (oauth === undefined) {
      ctx.issues.push({
        code: "custom",
        input: ctx.value,
        path: ["signin"],
        message:
          "browser sign-in needs [gateway.oauth]: its issuer is where browsers sign in, and its rules make the principal; add [gateway.oauth] with issuer",
      });
      return;
    }
    const problem = signInTransportProblem({
      publicUrl: ctx.value.public_url,
      allowedHosts: ctx.value.allowed_hosts,
    });
    if (problem) ctx.issues.push({ code: "custom", input: ctx.value, path: ["signin"], message: problem });
  })
  .check((ctx) => {
    // A resource is named after the Host of the request when nothing else names it: with the
    // host check off, any Host would name one, and a token for another server would do here.
    const { oauth, allowed_hosts: hosts, public_url: publicUrl } = ctx.value;
    if (oauth === undefined || !hosts.includes("*") || publicUrl !== undefined) return;
    if (oauth.audience !== undefined) return;
    ctx.issues.push({
      code: "custom",
      input: ctx.value,
      path: ["oauth"],
      message:
        'with allowed_hosts = ["*"] any Host header would name the resource a token must be for; set [gateway] public_url (the URL clients reach the gateway at) or [gateway.oauth] audience',
    });
  })
  .transform(
    (t): GatewayConfig => ({
      port: t.port,
      host: t.host,
      naming: t.naming,
      ...(t.tokens_env === undefined ? {} : { tokensEnv: t.tokens_env }),
      allowedHosts: t.allowed_hosts,
      allowUnauthenticated: t.allow_unauthenticated,
      elicitApprovals: t.elicit_approvals,
      resourceTools: t.resource_tools,
      maxSessionsPerClient: t.max_sessions_per_client,
      maxBatchSize: t.max_batch_size,
      maxStreams: t.max_streams,
      maxStreamsPerClient: t.max_streams_per_client,
      taskAfterMs: Math.round(t.task_after_sec * 1000),
      ...(t.public_url === undefined ? {} : { publicUrl: t.public_url }),
      ...(t.oauth === undefined ? {} : { oauth: t.oauth }),
      ...(t.signin === undefined ? {} : { signin: t.signin }),
    }),
  );

const CatalogTable = z
  .strictObject({
    name_limit: z
      .int()
      .min(MIN_NAME_LIMIT, { error: `must be at least ${MIN_NAME_LIMIT} (bytes)` })
      .default(DEFAULT_NAME_LIMIT),
    prefix_mcp: z.boolean().default(true),
    non_prefixed_servers: z.array(NonEmpty).optional(),
    servers_dir: NonEmpty.optional(),
    run_as: RunAs.optional(),
    sandbox: Sandbox.optional(),
  })
  .transform(
    (t): CatalogConfig => ({
      nameLimit: t.name_limit,
      prefixMcp: t.prefix_mcp,
      ...(t.non_prefixed_servers === undefined ? {} : { nonPrefixedServers: t.non_prefixed_servers }),
      ...(t.servers_dir === undefined ? {} : { serversDir: t.servers_dir }),
      ...(t.run_as === undefined ? {} : { runAs: t.run_as }),
      ...(t.sandbox === undefined ? {} : { sandbox: t.sandbox }),
    }),
  );

const ApprovalsTable = z
  .strictObject({
    timeout_sec: Seconds.optional(),
    hooks: NonEmpty.optional(),
    port: Port.default(DEFAULT_APPROVALS_PORT),
    max_concurrent_hooks: z
      .int({ error: "must be a whole number from 1 to 1024" })
      .min(1, { error: "must be a whole number from 1 to 1024" })
      .max(1_024, { error: "must be a whole number from 1 to 1024" })
      .default(DEFAULT_MAX_CONCURRENT_HOOKS),
    self_approve: z.boolean().default(false),
  })
  .transform(
    (t): ApprovalsConfig => ({
      timeoutMs: t.timeout_sec === undefined ? DEFAULT_APPROVAL_TIMEOUT_MS : secondsToMs(t.timeout_sec),
      ...(t.hooks === undefined ? {} : { hooksPath: t.hooks }),
      port: t.port,
      maxConcurrentHooks: t.max_concurrent_hooks,
      selfApprove: t.self_approve,
    }),
  );

// The same bounds as the memory service's MEMORY_* variables.
const MemoryTable = z
  .strictObject({
    batch_size: z
      .int()
      .min(1, { error: "must be from 1 to 10000" })
      .max(10_000, { error: "must be from 1 to 10000" })
      .optional(),
    max_deliveries: z
      .int()
      .min(1, { error: "must be from 1 to 1000" })
      .max(1_000, { error: "must be from 1 to 1000" })
      .optional(),
    redelivery_delay_sec: z
      .number()
      .min(0.01, { error: "must be from 0.01 to 60 seconds" })
      .max(60, { error: "must be from 0.01 to 60 seconds" })
      .optional(),
    ack_wait_sec: z
      .number()
      .min(1, { error: "must be from 1 to 600 seconds" })
      .max(600, { error: "must be from 1 to 600 seconds" })
      .optional(),
  })
  .transform(
    (t): MemoryConfig => ({
      batchSize: t.batch_size ?? DEFAULT_MEMORY_CONFIG.batchSize,
      maxDeliveries: t.max_deliveries ?? DEFAULT_MEMORY_CONFIG.maxDeliveries,
      redeliveryDelayMs:
        t.redelivery_delay_sec === undefined
          ? DEFAULT_MEMORY_CONFIG.redeliveryDelayMs
          : secondsToMs(t.redelivery_delay_sec),
      ackWaitMs: t.ack_wait_sec === undefined ? DEFAULT_MEMORY_CONFIG.ackWaitMs : secondsToMs(t.ack_wait_sec),
    }),
  );

const streamAgeSec = (min: number) => z.number().min(min, { error: `must be at least ${min} seconds` });
const StreamBytes = z
  .int()
  .min(MIN_STREAM_MAX_BYTES, { error: `must be at least ${MIN_STREAM_MAX_BYTES} bytes (1 MiB)` });

const BusTable = z
  .strictObject({
    events_max_age_sec: streamAgeSec(MIN_STREAM_MAX_AGE_SEC).optional(),
    events_max_bytes: StreamBytes.optional(),
    memory_max_age_sec: streamAgeSec(MIN_STREAM_MAX_AGE_SEC).optional(),
    memory_max_bytes: StreamBytes.optional(),
    large_reply_ttl_sec: streamAgeSec(MIN_LARGE_REPLY_TTL_SEC).optional(),
    large_replies_max_bytes: StreamBytes.optional(),
    large_replies_in_flight_bytes: StreamBytes.optional(),
    max_reply_bytes: StreamBytes.optional(),
  })
  .check((ctx) => {
    // The largest result toolbus reads must fit in the budget, or every such result is refused.
    const inFlight = ctx.value.large_replies_in_flight_bytes ?? DEFAULT_BUS_CONFIG.largeRepliesInFlightBytes;
    const maxReply = ctx.value.max_reply_bytes ?? DEFAULT_BUS_CONFIG.maxReplyBytes;
    if (inFlight < maxReply) {
      ctx.issues.push({
        code: "custom",
        input: ctx.value,
        path: ["large_replies_in_flight_bytes"],
        message: `must be at least max_reply_bytes (${maxReply}): a result as large as toolbus reads must fit in it`,
      });
    }
  })
  .transform((t): BusConfig => {
    const limits = (ageSec: number | undefined, bytes: number | undefined, defaults: StreamLimits) => ({
      maxAgeMs: ageSec === undefined ? defaults.maxAgeMs : secondsToMs(ageSec),
      maxBytes: bytes ?? defaults.maxBytes,
    });
    return {
      events: limits(t.events_max_age_sec, t.events_max_bytes, DEFAULT_BUS_CONFIG.events),
      memory: limits(t.memory_max_age_sec, t.memory_max_bytes, DEFAULT_BUS_CONFIG.memory),
      largeReplies: limits(t.large_reply_ttl_sec, t.large_replies_max_bytes, DEFAULT_BUS_CONFIG.largeReplies),
      largeRepliesInFlightBytes:
        t.large_replies_in_flight_bytes ?? DEFAULT_BUS_CONFIG.largeRepliesInFlightBytes,
      maxReplyBytes: t.max_reply_bytes ?? DEFAULT_BUS_CONFIG.maxReplyBytes,
    };
  });

/** The whole file except `[mcp_servers]`, which is parsed server by server so every server reports its problems. */
export const TablesSchema = z.strictObject({
  mcp_servers: z.unknown().optional(),
  gateway: GatewayTable.prefault({}),
  catalog: CatalogTable.prefault({}),
  approvals: ApprovalsTable.prefault({}),
  memory: MemoryTable.prefault({}),
  bus: BusTable.prefault({}),
  views: ViewsTable,
});
export type Tables = Omit<z.output<typeof TablesSchema>, "mcp_servers">;

export function defaultTables(): Tables {
  const { gateway, catalog, approvals, memory, bus, views } = TablesSchema.parse({});
  return { gateway, catalog, approvals, memory, bus, views };
}

/**
 * The catalog service: the servers it owns (all configured ones, or a subset to scale per
 * connector), each one's connector on that server's own bus identity, and the `catalog.*`
 * subjects that hand each server's part to its connector.
 */

import { type KV, KvWatchInclude } from "@nats-io/kv";
import type { Bus, Handler, LargeReplyOptions, Logger, RunningService } from "@toolbus/bus";
import {
  CallCancellations,
  CallLedger,
  EXECUTION_RECORD_TTL_MS,
  followCancellations,
  LARGE_REPLIES_BUDGET,
  largeReplyOptions,
  projectStateDir,
  setLargeRepliesInFlightBytes,
  verifyAssets,
} from "@toolbus/bus";
import {
  type McpServerConfig,
  namingOptionsOf,
  resolveHttpHeaders,
  serverNameProblem,
  type ToolbusConfig,
} from "@toolbus/config";
import { policySettingsFromEnv } from "@toolbus/policy";
import {
  CatalogGetRequestSchema,
  CatalogRefreshRequestSchema,
  CatalogSearchRequestSchema,
  CatalogServerEntrySchema,
  CompletionCompleteRequestSchema,
  ConnectorCallRequestSchema,
  catalogKey,
  identityOf,
  internalSubjects,
  PromptsGetRequestSchema,
  PromptsListRequestSchema,
  ResourcesListRequestSchema,
  ResourcesReadRequestSchema,
  ResourceTemplatesListRequestSchema,
  type StartupCompleteEvent,
  type Subjects,
  serverKeyPrefix,
} from "@toolbus/protocol";
import type { z } from "zod";
import type { ConnectSpec } from "./adapters/mcp/mcp-connection.js";
import { createCallRelay } from "./adapters/nats/call-relay.js";
import { CatalogStore } from "./adapters/nats/catalog-store.js";
import { ResourceOrigins } from "./adapters/nats/resource-origins.js";
import { prepareStdioLaunch, serverRoots } from "./adapters/stdio/prepare-launch.js";
import { ServerConnector, type StartupOutcome } from "./connectors/server-connector.js";
import { nextServerEntry, type ServerEntry, shouldReportStatus } from "./core/catalog-entry.js";
import {
  type RequiredServerOutcome,
  requiredServersFailure,
  startupFailureDisplay,
} from "./core/startup-messages.js";
import { type ServerRoots, stdioPlan } from "./core/stdio-launch.js";
import { catalogViewHandlers, ownerRefreshHandler } from "./handlers/catalog-view.js";
import { connectorCallHandler } from "./handlers/connector-call.js";
import { type ExecutionOutcome, executeOnce, orphanedOutcome } from "./handlers/execute-once.js";
import {
  OwnerCompleteRequestSchema,
  OwnerListRequestSchema,
  OwnerPromptsGetRequestSchema,
  OwnerPromptsListRequestSchema,
  OwnerReadRequestSchema,
  OwnerRefreshRequestSchema,
} from "./handlers/owner-subjects.js";
import { ownerPromptHandlers, publicPromptHandlers } from "./handlers/prompts.js";
import { ownerHandlers, publicHandlers } from "./handlers/resources.js";
import { catalogRecorder } from "./metrics.js";

export const SERVICE_NAME = "catalog";

export interface CatalogServiceDeps {
  /**
   * The catalog's own bus, on the catalog identity, where it serves `catalog.*` (`front`). A
   * process that runs connectors only has none: it holds its connectors' identities alone.
   */
  bus?: Bus;
  /**
   * The bus of one server's connector, on that server's own identity (NATS_NKEY_DIR): it may
   * answer that server's calls and write that server's catalog entry, nothing of another's. The
   * service closes it when it stops.
   */
  connectorBus(server: string): Promise<Bus>;
  subjects: Subjects;
  config: ToolbusConfig;
  /** Serve only these servers (`--servers a,b`); default every configured server. */
  servers?: readonly string[];
  /**
   * Serve the `catalog.*` subjects too (default): every server's listing, reads and prompts,
   * handed to each server's connector; needs `bus`. Off (`--connectors-only`) for a process that
   * runs connectors only.
   */
  front?: boolean;
  env: Readonly<Record<string, string | undefined>>;
  logger: Logger;
  /**
   * The project's private state directory, under which stdio servers get their own directories
   * (see core/stdio-launch.ts); default `projectStateDir(process.cwd(), env)`.
   */
  stateDir?: string;
}

export interface CatalogService extends RunningService {
  readonly connectors: ReadonlyMap<string, ServerConnector>;
  /** Resolves with the startup summary once every owned server is ready, failed or cancelled. */
  readonly startup: Promise<StartupCompleteEvent>;
  /** The reference's error when a required server did not come up, else undefined. */
  requiredFailure(): Promise<string | undefined>;
}

/** Items one server may list before its listing is refused (docs/reference-behavior.md §2.2). */
const MAX_TOOLS = 2048;
/** A repeat of a running call waits for the tool's timeout and this much more. */
const EXECUTION_WAIT_GRACE_MS = 10_000;
/**
 * How long a cancellation of a call not running here is remembered (its call may still be on
 * its way), and how many at most: longer than a call can wait in the executions ledger.
 */
const CANCEL_MEMORY = { rememberMs: EXECUTION_RECORD_TTL_MS, maxRemembered: 10_000 };
/** How long a public request waits for the connector that runs a server. */
const OWNER_TIMEOUT_MS = 60_000;
/** NATS's default max_payload, for a connection that has not reported its own. */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;

export async function startCatalogService(deps: CatalogServiceDeps): Promise<CatalogService> {
  const { subjects, config, logger } = deps;
  const owned = selectServers(config, deps.servers);
  const front = deps.front !== false;
  if (front && deps.bus === undefined) {
    throw new Error("serving catalog.* needs the catalog's own bus; without one, run connectors only");
  }
  // The bus `catalog.*` is served on: none in a connectors-only process.
  const bus = front ? deps.bus : undefined;
  // Read as the approvals service reads them: server elicitations follow the same policy (§5.7).
  const policy = policySettingsFromEnv(deps.env);
  const now = () => new Date().toISOString();
  const metrics = catalogRecorder();
  const unfollow: Array<() => void> = [];
  const connectorBuses: Bus[] = [];
  const largeReplies = largeReplyOptions(subjects, config.bus.largeReplies);
  setLargeRepliesInFlightBytes(config.bus.largeRepliesInFlightBytes);
  const maxPayload = (of: Bus) => of.nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD;
  // A stdio server's large result waits in its pipe while this process has no room for it.
  const readPressureOn = (of: Bus) => ({
    largeFrom: () => maxPayload(of),
    hasRoom: () => LARGE_REPLIES_BUDGET.hasRoom,
    whenRoom: () => LARGE_REPLIES_BUDGET.whenRoom(),
  });
  const storeOn = async (on: Bus) =>
    new CatalogStore({
      js: on.js(),
      jsm: await on.jsm(),
      kv: await on.kv(subjects.kv.catalog),
      bucket: subjects.kv.catalog,
      maxPayload: () => maxPayload(on),
    });

  // Nothing starts on streams the provisioner did not make, or someone changed since.
  let frontStore: CatalogStore | undefined;
  if (bus) {
    await verifyAssets(await bus.jsm(), identityOf("catalog"), subjects);
    frontStore = await storeOn(bus);
    await frontStore.putNaming(namingOptionsOf(config.catalog));
  }

  const baseOf = (server: McpServerConfig) => ({
    server: server.name,
    required: server.required,
    origin: server.transport === "stdio" ? "stdio" : new URL(server.url).origin,
    resourcesSupported: false,
    startupTimeoutMs: server.startupTimeoutMs,
    toolTimeoutMs: server.toolTimeoutMs,
    supportsParallelToolCalls: server.supportsParallelToolCalls,
    ...(server.omitToolsFrom.length > 0 ? { omitToolsFrom: server.omitToolsFrom } : {}),
  });

  // A name is checked when its server starts (§2.1): a bad one fails that server alone. It can
  // name no subject, identity or catalog key, so it is reported in the log and the start-up summary only.
  const badNames = new Map<string, string>();
  for (const server of owned.filter((s) => s.enabled)) {
    const problem = serverNameProblem(server.name);
    if (problem === undefined) continue;
    badNames.set(server.name, problem);
    logger.error(
      { server: server.name },
      startupFailureDisplay({
        server: server.name,
        error: problem,
        startupTimeoutMs: server.startupTimeoutMs,
      }),
    );
  }
  const startable = owned.filter((s) => serverNameProblem(s.name) === undefined);

  const connectors = new Map<string, ServerConnector>();
  const stores = new Map<string, CatalogStore>();
  const startFailures = new Map<string, string>();
  const roots = serverRoots(deps.stateDir ?? projectStateDir(process.cwd(), deps.env));
  const disabled: McpServerConfig[] = [];
  for (const server of startable) {
    const name = server.name;
    const own = await deps.connectorBus(name);
    connectorBuses.push(own);
    await verifyAssets(await own.jsm(), identityOf("connector", name), subjects);
    const store = await storeOn(own);
    stores.set(name, store);
    if (!server.enabled) {
      disabled.push(server);
      await store.apply(baseOf(server), { status: "disabled", tools: [] }, now);
      continue;
    }
    const spec = connectSpec(server, config, deps.env, roots);
    if (!spec.ok) startFailures.set(name, spec.message);
    const base = baseOf(server);
    const connector = new ServerConnector(
      {
        server: name,
        spec: spec.ok ? spec.spec : { transport: "stdio", command: "", args: [], env: {}, cwd: "" },
        required: server.required,
        startupTimeoutMs: server.startupTimeoutMs,
        toolTimeoutMs: server.toolTimeoutMs,
        supportsParallelToolCalls: server.supportsParallelToolCalls,
        origin: base.origin,
        maxTools: MAX_TOOLS,
        // No MCP message bigger than the largest reply the bus carries is read (one bigger than
        // a NATS message travels through the large-replies stream).
        maxMessageBytes: Math.max(maxPayload(own), config.bus.maxReplyBytes),
        readPressure: readPressureOn(own),
        policy,
        ...(server.transport === "stdio" && server.isolation ? { isolation: server.isolation } : {}),
        ...(server.enabledTools ? { enabledTools: server.enabledTools } : {}),
        ...(server.disabledTools ? { disabledTools: server.disabledTools } : {}),
      },
      {
        log: logger,
        restarting: metrics.restarting,
        publishStatus: (_, status) =>
          own.publishEvent(subjects.serverStatus(name), { server: name, status, at: now() }),
        writeEntry: async (_, change) => {
          // A replica's own transient states never overwrite another replica's `ready`.
          const { entry, sequence } = await store.update(name, (current, nextRevision) =>
            !shouldReportStatus(current, change.status)
              ? undefined
              : nextServerEntry(current, base, change, nextRevision, now()),
          );
          // The entry's revision is the write's own exactly when its tools changed.
          if (sequence !== undefined && entry.revision === sequence) {
            own.publishEvent(subjects.catalogEvent, { revision: entry.revision, changed: [name] });
          }
          return entry;
        },
        relayFor: (callId) =>
          createCallRelay({
            bus: own,
            subjects,
            server: name,
            callId,
            answerTimeoutMs: server.toolTimeoutMs,
          }),
        promptsChanged: () => own.publishEvent(subjects.promptsEvent, { server: name, at: now() }),
      },
    );
    connectors.set(name, connector);
    await serveConnector({ bus: own, subjects, connector, largeReplies, metrics, logger, unfollow });
    unfollow.push(await watchOtherReplicas(await own.kv(subjects.kv.catalog), connector, logger));
  }

  if (bus && frontStore) {
    await serveFront({
      bus,
      subjects,
      store: frontStore,
      naming: namingOptionsOf(config.catalog),
      largeReplies,
    });
  }

  // The catalog revision the metrics show: the front's view, or any connector's.
  const revisionStore = frontStore ?? stores.values().next().value;
  const stopObserving = metrics.observe({
    revision: () => revisionStore?.revision() ?? Promise.resolve(0),
    *statuses() {
      for (let i = 0; i < disabled.length; i++) yield "disabled";
      for (let i = 0; i < badNames.size; i++) yield "failed";
      for (const connector of connectors.values()) yield connector.status;
    },
  });

  const outcomes = new Map<string, StartupOutcome>(
    [...badNames].map(([name, error]) => [name, { state: "failed", error }]),
  );
  const startup = Promise.all(
    [...connectors].map(async ([name, connector]) => {
      const failure = startFailures.get(name);
      const outcome = failure ? await connector.fail(failure) : await connector.start();
      outcomes.set(name, outcome);
    }),
  ).then(async () => {
    const summary: StartupCompleteEvent = { ready: [], failed: [], cancelled: [] };
    for (const [server, outcome] of [...outcomes].sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (outcome.state === "ready") summary.ready.push(server);
      else if (outcome.state === "failed") summary.failed.push({ server, error: outcome.error });
      else summary.cancelled.push(server);
    }
    // The summary of this process's servers, said on the catalog's own subject once the status
    // events, sent on each connector's own connection, are stored: it comes after them.
    if (bus) {
      await Promise.all(connectorBuses.map((each) => each.flushEvents()));
      bus.publishEvent(subjects.startupComplete, summary);
    }
    return summary;
  });

  return {
    connectors,
    startup,
    async requiredFailure() {
      await startup;
      const required = new Map<string, RequiredServerOutcome>();
      for (const server of owned.filter((s) => s.enabled && s.required)) {
        required.set(server.name, outcomes.get(server.name) ?? { state: "missing" });
      }
      return requiredServersFailure(required);
    },
    drain: async (options) => {
      await Promise.all([...(bus ? [bus] : []), ...connectorBuses].map((each) => each.drain(options)));
    },
    async stop() {
      stopObserving();
      for (const stopFollowing of unfollow) stopFollowing();
      await Promise.all([...connectors.values()].map((c) => c.stop()));
      await Promise.all(connectorBuses.map((each) => each.close()));
    },
  };
}

/** The `catalog.*` subjects: every server's view, each server's part asked of its connector. */
async function serveFront(deps: {
  bus: Bus;
  subjects: Subjects;
  store: CatalogStore;
  naming: ReturnType<typeof namingOptionsOf>;
  largeReplies: LargeReplyOptions;
}): Promise<void> {
  const { bus, subjects, store, largeReplies } = deps;
  const prefix = subjects.prefix;
  const view = catalogViewHandlers({ bus, prefix, store, naming: deps.naming, timeoutMs: OWNER_TIMEOUT_MS });
  await bus.serve(
    { subject: subjects.catalogGet, name: "catalog-get", request: CatalogGetRequestSchema, largeReplies },
    view.get,
  );
  await bus.serve(
    { subject: subjects.catalogSearch, name: "catalog-search", request: CatalogSearchRequestSchema },
    view.search,
  );
  await bus.serve(
    { subject: subjects.catalogRefresh, name: "catalog-refresh", request: CatalogRefreshRequestSchema },
    view.refresh,
  );
  const origins = new ResourceOrigins(await bus.kv(internalSubjects(prefix).kv.resourceOrigins));
  const resources = publicHandlers({ bus, prefix, store, origins, timeoutMs: OWNER_TIMEOUT_MS });
  await bus.serve(
    { subject: subjects.catalogResourcesList, name: "resources-list", request: ResourcesListRequestSchema },
    resources.list,
  );
  await bus.serve(
    {
      subject: subjects.catalogResourceTemplatesList,
      name: "resource-templates-list",
      request: ResourceTemplatesListRequestSchema,
    },
    resources.templates,
  );
  await bus.serve(
    { subject: subjects.catalogResourcesRead, name: "resources-read", request: ResourcesReadRequestSchema },
    resources.read,
  );
  const prompts = publicPromptHandlers({ bus, prefix, store, timeoutMs: OWNER_TIMEOUT_MS });
  await bus.serve(
    { subject: subjects.catalogPromptsList, name: "prompts-list", request: PromptsListRequestSchema },
    prompts.list,
  );
  await bus.serve(
    { subject: subjects.catalogPromptsGet, name: "prompts-get", request: PromptsGetRequestSchema },
    prompts.get,
  );
  await bus.serve(
    {
      subject: subjects.catalogCompletionComplete,
      name: "completion-complete",
      request: CompletionCompleteRequestSchema,
    },
    prompts.complete,
  );
}

/** One server's subjects, on its connector's own bus: its calls, cancellations and owner requests. */
async function serveConnector(deps: {
  bus: Bus;
  subjects: Subjects;
  connector: ServerConnector;
  largeReplies: LargeReplyOptions;
  metrics: ReturnType<typeof catalogRecorder>;
  logger: Logger;
  unfollow: Array<() => void>;
}): Promise<void> {
  const { bus, subjects, connector, largeReplies, metrics, logger } = deps;
  const name = connector.settings.server;
  const internal = internalSubjects(subjects.prefix);
  const executions = new CallLedger<ExecutionOutcome>({
    bus,
    kv: await bus.kv(internal.kv.executions),
    keyPrefix: serverKeyPrefix(name),
    // Running it again could run the tool twice: a call whose replica died is answered as such.
    onOrphan: (owner) => orphanedOutcome(owner),
  });
  const origins = new ResourceOrigins(await bus.kv(internal.kv.resourceOrigins));
  const cancellations = new CallCancellations({ now: () => Date.now(), ...CANCEL_MEMORY });
  // Replicas serving the same server share its subjects through a queue group of their own.
  const queue = `connector-${name}`;
  const call = executeOnce({
    ledger: executions,
    waitMs: (request) => (request.timeoutMs ?? connector.settings.toolTimeoutMs) + EXECUTION_WAIT_GRACE_MS,
    run: connectorCallHandler({
      connector,
      recordCall: (outcome, seconds) => metrics.connectorCall(name, outcome, seconds),
      origins,
      cancellations,
      progressFor: (callId) =>
        createCallRelay({ bus, subjects, server: name, callId, answerTimeoutMs: 0 }).progress,
    }),
  });
  // Every replica serving the server hears the cancellation; the one running the call stops it.
  deps.unfollow.push(followCancellations(bus, subjects.connectorCancel(name), cancellations, logger));
  await bus.serve(
    {
      subject: subjects.connectorCall(name),
      name: `connector-${name}-call`,
      queue,
      request: ConnectorCallRequestSchema,
      largeReplies,
    },
    call,
  );
  const owner = ownerHandlers(connector);
  const ownerPrompts = ownerPromptHandlers(connector);
  const subjectsOf = internal.connectorOwner(name);
  // The subjects only this server's connector answers, in the server's own queue group.
  const serveOwned = <S extends z.ZodType, Res>(
    subject: string,
    endpoint: string,
    request: S,
    handler: Handler<z.output<S>, Res>,
  ) => bus.serve({ subject, name: `connector-${name}-${endpoint}`, queue, request }, handler);
  await serveOwned(subjectsOf.resourcesList, "resources-list", OwnerListRequestSchema, owner.list);
  await serveOwned(subjectsOf.resourcesRead, "resources-read", OwnerReadRequestSchema, owner.read);
  await serveOwned(subjectsOf.promptsList, "prompts-list", OwnerPromptsListRequestSchema, ownerPrompts.list);
  await serveOwned(subjectsOf.promptsGet, "prompts-get", OwnerPromptsGetRequestSchema, ownerPrompts.get);
  await serveOwned(
    subjectsOf.complete,
    "completion-complete",
    OwnerCompleteRequestSchema,
    ownerPrompts.complete,
  );
  await serveOwned(subjectsOf.refresh, "refresh", OwnerRefreshRequestSchema, ownerRefreshHandler(connector));
}

function selectServers(config: ToolbusConfig, only: readonly string[] | undefined): McpServerConfig[] {
  const all = Object.values(config.mcpServers);
  if (!only) return all;
  const unknown = only.filter((name) => !config.mcpServers[name]);
  if (unknown.length > 0) {
    throw new Error(
      `--servers names ${unknown.map((n) => `'${n}'`).join(", ")}, not configured in ${config.source.kind === "file" ? config.source.path : "the demo config"}; configured: ${Object.keys(config.mcpServers).join(", ")}`,
    );
  }
  return all.filter((server) => only.includes(server.name));
}

function connectSpec(
  server: McpServerConfig,
  config: ToolbusConfig,
  env: Readonly<Record<string, string | undefined>>,
  roots: ServerRoots,
): { ok: true; spec: ConnectSpec } | { ok: false; message: string } {
  if (server.transport === "stdio") {
    const prepared = prepareStdioLaunch(server, stdioPlan(server, config.catalog, roots), env);
    return prepared.ok ? { ok: true, spec: { transport: "stdio", ...prepared.launch } } : prepared;
  }
  const headers = resolveHttpHeaders(server, env);
  if (!headers.ok) return headers;
  return {
    ok: true,
    spec: {
      transport: server.legacySse ? "sse" : "streamable_http",
      url: server.url,
      headers: headers.headers,
    },
  };
}

/** Another replica of this server wrote its entry: keep the barrier's revision current. */
async function watchOtherReplicas(kv: KV, connector: ServerConnector, logger: Logger): Promise<() => void> {
  const server = connector.settings.server;
  const watch = await kv.watch({ key: catalogKey(server), include: KvWatchInclude.UpdatesOnly });
  void (async () => {
    try {
      for await (const update of watch) {
        if (update.operation !== "PUT") continue;
        // Whoever holds this server's identity may write anything here: only a whole entry counts.
        const entry = CatalogServerEntrySchema.safeParse(jsonOrUndefined(update.string()));
        if (entry.success && entry.data.server === server) connector.observeEntry(entry.data as ServerEntry);
        else logger.warn({ server }, "ignored a catalog entry for this server that is not a catalog entry");
      }
    } catch (error) {
      logger.warn({ err: error, server }, "the catalog watch ended");
    }
  })();
  return () => watch.stop();
}

function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The catalog service: the servers it owns (all configured ones, or a subset to scale per
 * connector), their connectors, the catalog bucket and every subject it serves.
 */

import { type KV, KvWatchInclude } from "@nats-io/kv";
import type { Bus, Handler, Logger, RunningService } from "@toolbus/bus";
import {
  CallCancellations,
  CallLedger,
  ensureEventsStream,
  ensureKv,
  ensureLargeRepliesStream,
  followCancellations,
  LARGE_REPLIES_BUDGET,
  largeReplyOptions,
  setLargeRepliesInFlightBytes,
} from "@toolbus/bus";
import {
  type McpServerConfig,
  resolveHttpHeaders,
  serverNameProblem,
  stdioChildEnv,
  type ToolbusConfig,
} from "@toolbus/config";
import { policySettingsFromEnv } from "@toolbus/policy";
import {
  CatalogGetRequestSchema,
  CatalogRefreshRequestSchema,
  CatalogSearchRequestSchema,
  CompletionCompleteRequestSchema,
  ConnectorCallRequestSchema,
  internalSubjects,
  PromptsGetRequestSchema,
  PromptsListRequestSchema,
  ResourcesListRequestSchema,
  ResourcesReadRequestSchema,
  ResourceTemplatesListRequestSchema,
  type StartupCompleteEvent,
  type Subjects,
  serverFromCatalogKey,
} from "@toolbus/protocol";
import type { z } from "zod";
import type { ConnectSpec } from "./adapters/mcp/mcp-connection.js";
import { createCallRelay } from "./adapters/nats/call-relay.js";
import { CatalogStore } from "./adapters/nats/catalog-store.js";
import { ResourceOrigins } from "./adapters/nats/resource-origins.js";
import { ServerConnector, type StartupOutcome } from "./connectors/server-connector.js";
import { nextServerEntry, type ServerEntry, shouldReportStatus } from "./core/catalog-entry.js";
import {
  type RequiredServerOutcome,
  requiredServersFailure,
  startupFailureDisplay,
} from "./core/startup-messages.js";
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
  bus: Bus;
  subjects: Subjects;
  config: ToolbusConfig;
  /** Serve only these servers (`--servers a,b`); default every configured server. */
  servers?: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  logger: Logger;
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
/** How long resource origins are remembered for `originCallId` checks. */
const ORIGIN_TTL_MS = 24 * 60 * 60 * 1000;
/** How long the cluster remembers a tool call's execution and outcome (see the dispatcher's ledger). */
const EXECUTION_RECORD_TTL_MS = 30 * 60 * 1000;
/** A repeat of a running call waits for the tool's timeout and this much more. */
const EXECUTION_WAIT_GRACE_MS = 10_000;
/**
 * How long a cancellation of a call not running here is remembered (its call may still be on
 * its way), and how many at most: longer than a call can wait in the executions ledger.
 */
const CANCEL_MEMORY = { rememberMs: EXECUTION_RECORD_TTL_MS, maxRemembered: 10_000 };
/** How long a public request waits for the replica that owns a server. */
const OWNER_TIMEOUT_MS = 60_000;
/** NATS's default max_payload, for a connection that has not reported its own. */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;

export async function startCatalogService(deps: CatalogServiceDeps): Promise<CatalogService> {
  const { bus, subjects, config, logger } = deps;
  const owned = selectServers(config, deps.servers);
  // Read as the approvals service reads them: server elicitations follow the same policy (§5.7).
  const policy = policySettingsFromEnv(deps.env);
  const jsm = await bus.jsm();
  await ensureEventsStream(jsm, subjects.streams.events, config.bus.events, bus.replicas);
  const kv = await ensureKv(bus, subjects.kv.catalog, { history: 1 });
  const store = new CatalogStore({
    js: bus.js(),
    jsm,
    kv,
    bucket: subjects.kv.catalog,
    maxPayload: () => bus.nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD,
  });
  const origins = new ResourceOrigins(
    await ensureKv(bus, internalSubjects(subjects.prefix).kv.resourceOrigins, {
      history: 1,
      ttl: ORIGIN_TTL_MS,
    }),
  );
  await store.putNaming(config.catalog);
  const executions = new CallLedger<ExecutionOutcome>({
    bus,
    kv: await ensureKv(bus, internalSubjects(subjects.prefix).kv.executions, {
      history: 1,
      ttl: EXECUTION_RECORD_TTL_MS,
    }),
    // Running it again could run the tool twice: a call whose replica died is answered as such.
    onOrphan: (owner) => orphanedOutcome(owner),
  });
  const now = () => new Date().toISOString();
  const metrics = catalogRecorder();
  const cancellations = new CallCancellations({ now: () => Date.now(), ...CANCEL_MEMORY });
  const unfollow: Array<() => void> = [];
  // No MCP message bigger than the largest reply the bus carries is read (one bigger than a NATS
  // message travels through the large-replies stream).
  const maxMessageBytes = Math.max(bus.nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD, config.bus.maxReplyBytes);
  const largeReplies = largeReplyOptions(subjects, config.bus.largeReplies);
  // Until provisioning creates it (largeRepliesStreamConfig), the services that store replies do.
  await ensureLargeRepliesStream(bus, largeReplies);
  setLargeRepliesInFlightBytes(config.bus.largeRepliesInFlightBytes);
  // A stdio server's large result waits in its pipe while this process has no room for it.
  const readPressure = {
    largeFrom: () => bus.nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD,
    hasRoom: () => LARGE_REPLIES_BUDGET.hasRoom,
    whenRoom: () => LARGE_REPLIES_BUDGET.whenRoom(),
  };

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
  // name no subject or catalog key, so it is reported in the log and the start-up summary only.
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

  for (const server of startable.filter((s) => !s.enabled)) {
    await store.apply(baseOf(server), { status: "disabled", tools: [] }, now);
  }

  const connectors = new Map<string, ServerConnector>();
  const startFailures = new Map<string, string>();
  for (const server of startable.filter((s) => s.enabled)) {
    const spec = connectSpec(server, deps.env);
    if (!spec.ok) startFailures.set(server.name, spec.message);
    const base = baseOf(server);
    const connector = new ServerConnector(
      {
        server: server.name,
        spec: spec.ok ? spec.spec : { transport: "stdio", command: "", args: [], env: {} },
        required: server.required,
        startupTimeoutMs: server.startupTimeoutMs,
        toolTimeoutMs: server.toolTimeoutMs,
        supportsParallelToolCalls: server.supportsParallelToolCalls,
        origin: base.origin,
        maxTools: MAX_TOOLS,
        maxMessageBytes,
        readPressure,
        policy,
        ...(server.enabledTools ? { enabledTools: server.enabledTools } : {}),
        ...(server.disabledTools ? { disabledTools: server.disabledTools } : {}),
      },
      {
        log: logger,
        restarting: metrics.restarting,
        publishStatus: (name, status) =>
          bus.publishEvent(subjects.serverStatus(name), { server: name, status, at: now() }),
        writeEntry: async (name, change) => {
          // A replica's own transient states never overwrite another replica's `ready`.
          const { entry, sequence } = await store.update(name, (current, nextRevision) =>
            !shouldReportStatus(current, change.status)
              ? undefined
              : nextServerEntry(current, base, change, nextRevision, now()),
          );
          // The entry's revision is the write's own exactly when its tools changed.
          if (sequence !== undefined && entry.revision === sequence) {
            bus.publishEvent(subjects.catalogEvent, { revision: entry.revision, changed: [name] });
          }
          return entry;
        },
        relayFor: (callId) =>
          createCallRelay({
            bus,
            subjects,
            server: server.name,
            callId,
            answerTimeoutMs: server.toolTimeoutMs,
          }),
        promptsChanged: (name) => bus.publishEvent(subjects.promptsEvent, { server: name, at: now() }),
      },
    );
    connectors.set(server.name, connector);
  }

  const view = catalogViewHandlers({
    bus,
    prefix: subjects.prefix,
    store,
    naming: config.catalog,
    timeoutMs: OWNER_TIMEOUT_MS,
  });
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
  const resources = publicHandlers({
    bus,
    prefix: subjects.prefix,
    store,
    origins,
    timeoutMs: OWNER_TIMEOUT_MS,
  });
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
  const prompts = publicPromptHandlers({ bus, prefix: subjects.prefix, store, timeoutMs: OWNER_TIMEOUT_MS });
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

  for (const [name, connector] of connectors) {
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
    unfollow.push(followCancellations(bus, subjects.connectorCancel(name), cancellations, logger));
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
    const subjectsOf = internalSubjects(subjects.prefix).connectorOwner(name);
    // The subjects only this server's owner answers, in the server's own queue group.
    const serveOwned = <S extends z.ZodType, Res>(
      subject: string,
      endpoint: string,
      request: S,
      handler: Handler<z.output<S>, Res>,
    ) => bus.serve({ subject, name: `connector-${name}-${endpoint}`, queue, request }, handler);
    await serveOwned(subjectsOf.resourcesList, "resources-list", OwnerListRequestSchema, owner.list);
    await serveOwned(subjectsOf.resourcesRead, "resources-read", OwnerReadRequestSchema, owner.read);
    await serveOwned(
      subjectsOf.promptsList,
      "prompts-list",
      OwnerPromptsListRequestSchema,
      ownerPrompts.list,
    );
    await serveOwned(subjectsOf.promptsGet, "prompts-get", OwnerPromptsGetRequestSchema, ownerPrompts.get);
    await serveOwned(
      subjectsOf.complete,
      "completion-complete",
      OwnerCompleteRequestSchema,
      ownerPrompts.complete,
    );
    await serveOwned(
      subjectsOf.refresh,
      "refresh",
      OwnerRefreshRequestSchema,
      ownerRefreshHandler(connector),
    );
  }

  const stopWatch = await watchOtherReplicas(kv, connectors, logger);
  const disabledCount = owned.filter((server) => !server.enabled).length;
  const stopObserving = metrics.observe({
    revision: () => store.revision(),
    *statuses() {
      for (let i = 0; i < disabledCount; i++) yield "disabled";
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
  ).then(() => {
    const summary: StartupCompleteEvent = { ready: [], failed: [], cancelled: [] };
    for (const [server, outcome] of [...outcomes].sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (outcome.state === "ready") summary.ready.push(server);
      else if (outcome.state === "failed") summary.failed.push({ server, error: outcome.error });
      else summary.cancelled.push(server);
    }
    bus.publishEvent(subjects.startupComplete, summary);
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
    drain: (options) => bus.drain(options),
    async stop() {
      stopWatch();
      stopObserving();
      for (const stopFollowing of unfollow) stopFollowing();
      await Promise.all([...connectors.values()].map((c) => c.stop()));
    },
  };
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
  env: Readonly<Record<string, string | undefined>>,
): { ok: true; spec: ConnectSpec } | { ok: false; message: string } {
  if (server.transport === "stdio") {
    return {
      ok: true,
      spec: {
        transport: "stdio",
        command: server.command,
        args: server.args,
        env: stdioChildEnv(server, env),
        ...(server.cwd ? { cwd: server.cwd } : {}),
      },
    };
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

/** Another replica of one of our servers wrote its entry: keep the barrier's revision current. */
async function watchOtherReplicas(
  kv: KV,
  connectors: ReadonlyMap<string, ServerConnector>,
  logger: Logger,
): Promise<() => void> {
  const watch = await kv.watch({ key: "server.*", include: KvWatchInclude.UpdatesOnly });
  void (async () => {
    try {
      for await (const update of watch) {
        if (update.operation !== "PUT") continue;
        const entry = update.json<ServerEntry>();
        const connector = connectors.get(entry.server);
        if (connector && serverFromCatalogKey(update.key) === entry.server) connector.observeEntry(entry);
      }
    } catch (error) {
      logger.warn({ err: error }, "the catalog watch ended");
    }
  })();
  return () => watch.stop();
}

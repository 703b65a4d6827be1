/**
 * The gateway, assembled: the catalog view, the bus clients (dispatch, resources, call relays,
 * approvals, session store), the MCP session registry and the HTTP app, listening. Used by
 * main.ts, by tests, and by an all-in-one process that runs the gateway in-process.
 */
import { randomUUID } from "node:crypto";
import {
  type Bus,
  CALL_RECORD_TTL_MS,
  ConfigError,
  type Logger,
  type RunningService,
  verifyAssets,
} from "@toolbus/bus";
import {
  DEFAULT_EDGE_LIMITS,
  DEFAULT_SESSION_IDLE_TTL_MS,
  type Env,
  type GatewayConfig,
  type GatewayPrincipal,
  resolveIntrospectionSecret,
  resolveSignInSecrets,
  type ViewConfig,
} from "@toolbus/config";
import {
  type BrowserSignIn,
  checkBind,
  createBrowserSignIn,
  createOAuthResourceServer,
  type IntrospectionLimits,
  type IssuerLimits,
  type OAuthResourceServer,
  type Principal,
  type TokenCacheLimits,
} from "@toolbus/http-guard";
import { identityOf, internalSubjects, type Subjects, TOOLBUS_VERSION } from "@toolbus/protocol";
import type { FastifyInstance, FastifyPluginAsync } from "fastify";
import { consolePage } from "./adapters/http/console-page.js";
import { eventsSse } from "./adapters/http/events-sse.js";
import { buildHttpApp } from "./adapters/http/http-app.js";
import { openApi } from "./adapters/http/openapi.js";
import { restApi } from "./adapters/http/rest-api.js";
import { AwaitedAnswers, type ModernEdge, modernEdge } from "./adapters/mcp/modern-edge.js";
import { MadeHere } from "./adapters/mcp/modern-tasks.js";
import { SessionRegistry, type ViewSessionDeps } from "./adapters/mcp/session-registry.js";
import { approvalsClient } from "./adapters/nats/approvals-client.js";
import { busHealth } from "./adapters/nats/bus-health.js";
import { callRelayListener } from "./adapters/nats/call-relay.js";
import { callsClient } from "./adapters/nats/calls-client.js";
import { CatalogView } from "./adapters/nats/catalog-view.js";
import { openSessionStore } from "./adapters/nats/session-store.js";
import { dispatchClient, promptsClient, resourcesClient } from "./adapters/nats/toolbus-clients.js";
import { GATEWAY_INTRO } from "./core/gateway-instructions.js";
import {
  compileView,
  type GatewayView,
  MCP_PATH,
  missingScopes,
  requiredScopes,
  type ToolScopes,
  viewPath,
  viewPorts,
} from "./core/views.js";
import { promptHandlers } from "./handlers/prompts.js";
import { resourceHandlers } from "./handlers/resources.js";
import { gatewayRecorder } from "./metrics.js";
import type { GatewayPorts } from "./ports.js";

export const SERVICE_NAME = "gateway";

/** How long a stopping gateway waits for requests in flight before it closes their connections. */
const CLOSE_GRACE_MS = 3_000;

export interface GatewayLimits {
  /** A session with no request and no open stream for this long is closed. */
  sessionIdleTtlMs: number;
  /** Sessions held at once; past it the least recently used idle one is closed. */
  maxSessions: number;
  /** Larger request bodies are answered 413. */
  bodyLimitBytes: number;
  /** How long a tools/call may wait for the dispatcher: approval wait plus the tool's own timeout. */
  callTimeoutMs: number;
  /** How long a client may take to answer an elicitation (approval or relayed). */
  answerTimeoutMs: number;
  /** The longest wait between two attempts to follow the catalog bucket (after a failure). */
  catalogRetryMaxMs: number;
  /** Bound of resource, prompt and completion requests to the catalog. */
  resourceTimeoutMs: number;
  /**
   * How the gateway reaches its OAuth issuer (timeouts, sizes, the key set's cooldown) and how
   * long a good token is reused; defaults in @toolbus/http-guard.
   */
  oauth?: {
    issuer?: Partial<IssuerLimits>;
    introspection?: Partial<IntrospectionLimits>;
    tokens?: Partial<TokenCacheLimits>;
  };
}

export const DEFAULT_GATEWAY_LIMITS: Readonly<GatewayLimits> = Object.freeze({
  sessionIdleTtlMs: DEFAULT_SESSION_IDLE_TTL_MS,
  maxSessions: 10_000,
  bodyLimitBytes: 4 * 1024 * 1024,
  callTimeoutMs: 16 * 60_000,
  answerTimeoutMs: 10 * 60_000,
  catalogRetryMaxMs: 30_000,
  resourceTimeoutMs: 60_000,
});

export interface GatewayServiceDeps {
  bus: Bus;
  subjects: Subjects;
  logger: Logger;
  /** `[gateway]` from toolbus.toml; port 0 picks a free port. Limits left out take their defaults. */
  gateway: Pick<GatewayConfig, "port" | "host" | "naming" | "allowedHosts"> &
    Partial<
      Pick<
        GatewayConfig,
        | "allowUnauthenticated"
        | "elicitApprovals"
        | "resourceTools"
        | "maxSessionsPerClient"
        | "maxBatchSize"
        | "maxStreams"
        | "maxStreamsPerClient"
        | "taskAfterMs"
        | "publicUrl"
        | "oauth"
        | "signin"
      >
    >;
  /** Where secrets named by the config are read (the introspection and sign-in clients', the session's); default `process.env`. */
  env?: Env;
  /**
   * Accepted bearer tokens with their principals (see `resolveGatewayTokens`); none or empty
   * turns auth off, which only a loopback host or `allowUnauthenticated` permits.
   */
  principals?: readonly GatewayPrincipal[];
  limits?: Partial<GatewayLimits>;
  /** `[approvals] self_approve`: whether a caller may answer its own call's approval. */
  selfApprove?: boolean;
  /** `[views.<name>]`: the catalog views served at `/mcp/<name>`. */
  views?: readonly ViewConfig[];
  /** `[mcp_servers.<s>.tools.<t>] scopes`: by server, then raw tool name. */
  toolScopes?: ToolScopes;
  version?: string;
  /**
   * More routes on the same port (the approvals inbox and its API in the all-in-one process);
   * the guard applies to them too (each route declares its access: `routeAccess` of @toolbus/http-guard).
   */
  plugins?: readonly FastifyPluginAsync[];
}

export interface GatewayService extends RunningService {
  /** `http://<host>:<port>`; the MCP endpoint is `${url}/mcp`. */
  url: string;
  app: FastifyInstance;
  /** Sessions this replica holds now. */
  sessions(): number;
  /** Bus connected and catalog loaded (what `/readyz` reports). */
  ready(): boolean;
}

export async function startGatewayService(deps: GatewayServiceDeps): Promise<GatewayService> {
  const { bus, subjects, logger } = deps;
  const principals = deps.principals ?? [];
  const edge = {
    ...DEFAULT_EDGE_LIMITS,
    allowUnauthenticated: false,
    elicitApprovals: true,
    resourceTools: true,
    ...deps.gateway,
  };
  const oauth = oauthResourceServer(deps);
  const signin = oauth ? browserSignIn(deps, oauth) : undefined;
  const bind = checkBind({
    host: edge.host,
    authenticated: principals.length > 0 || oauth !== undefined,
    allowUnauthenticated: edge.allowUnauthenticated,
    what: "the gateway",
  });
  if (!bind.ok) throw new ConfigError([bind.message]);
  const limits: GatewayLimits = { ...DEFAULT_GATEWAY_LIMITS, ...deps.limits };
  const version = deps.version ?? TOOLBUS_VERSION;
  const health = busHealth(bus.nc);
  // Nothing starts on streams the provisioner did not make, or someone changed since.
  await verifyAssets(await bus.jsm(), identityOf("gateway"), subjects);

  // A task lasts as long as the call ledger keeps its reply, and the session bucket its record.
  const taskTtlMs = Math.min(CALL_RECORD_TTL_MS, limits.sessionIdleTtlMs);
  let registry: SessionRegistry | undefined;
  // The 2026-07-28 era of each endpoint, by view ("" for /mcp).
  const modern = new Map<string, ModernEdge>();
  const catalog = new CatalogView({
    bus,
    subjects,
    naming: deps.gateway.naming,
    resourceTools: edge.resourceTools,
    logger,
    retryMaxMs: limits.catalogRetryMaxMs,
    firstLoadWaitMs: 5_000,
    onListingChanged: () => {
      registry?.notifyToolListChanged();
      for (const edge of modern.values()) edge.toolsChanged();
    },
  });
  catalog.start();

  const approvals = approvalsClient(bus, subjects, logger);
  const metrics = gatewayRecorder();
  const callLedger = await bus.kv(internalSubjects(subjects.prefix).kv.calls);
  const dispatch = dispatchClient(bus, subjects, limits.callTimeoutMs, callLedger);
  const relay = callRelayListener(bus.nc, subjects, logger);
  const calls = callsClient(bus, subjects);
  const ports: GatewayPorts = {
    catalog,
    dispatch: metrics.countingCalls(dispatch, "mcp"),
    relay,
    approvals,
    calls,
    resources: resourcesClient(bus, subjects, limits.resourceTimeoutMs),
    prompts: promptsClient(bus, subjects, limits.resourceTimeoutMs),
    newCallId: () => `gw-${randomUUID()}`,
  };
  const handlersOf = (of: GatewayPorts) => ({
    resources: resourceHandlers({
      resources: of.resources,
      directoryTtlMs: 30_000,
      now: () => Date.now(),
      warn: (dropped) => logger.warn({ server: dropped.server, count: dropped.count }, dropped.message),
    }),
    prompts: promptHandlers({
      prompts: of.prompts,
      resources: of.resources,
      naming: deps.gateway.naming,
      directoryTtlMs: 30_000,
      now: () => Date.now(),
    }),
  });
  const { resources, prompts } = handlersOf(ports);
  const views = new Map((deps.views ?? []).map((config) => [config.name, compileView(config)]));
  // The instructions of the catalog as a session sees it when it starts (an initialize never
  // waits for the catalog: before it loads, only the gateway's own line).
  const instructionsOf = (of: GatewayPorts) => async () =>
    catalog.loaded ? (await of.catalog.current()).instructions : GATEWAY_INTRO;
  const viewSessions = new Map(
    [...views.values()].map((view): [string, ViewSessionDeps] => {
      const viewed = viewPorts(ports, view);
      return [view.name, { ports: viewed, ...handlersOf(viewed), instructions: instructionsOf(viewed) }];
    }),
  );
  // A server's prompts changed: names are listed again, and every session is told.
  const promptsChanged = bus.nc.subscribe(subjects.promptsEvent, {
    callback: () => {
      prompts.invalidate();
      for (const view of viewSessions.values()) view.prompts.invalidate();
      registry?.notifyPromptListChanged();
      for (const edge of modern.values()) edge.promptsChanged();
    },
  });
  const store = await openSessionStore({
    bus,
    prefix: subjects.prefix,
    ttlMs: limits.sessionIdleTtlMs,
    answerTimeoutMs: limits.answerTimeoutMs,
    taskTtlMs,
    logger,
  });
  registry = new SessionRegistry({
    session: {
      ports,
      resources,
      prompts,
      logger,
      serverInfo: { name: "toolbus", version },
      instructions: instructionsOf(ports),
      answerTimeoutMs: limits.answerTimeoutMs,
      elicitApprovals: edge.elicitApprovals,
      selfApprove: deps.selfApprove ?? false,
    },
    views: viewSessions,
    store,
    logger,
    idleTtlMs: limits.sessionIdleTtlMs,
    maxSessions: limits.maxSessions,
    maxSessionsPerClient: edge.maxSessionsPerClient,
    now: () => performance.now(),
  });
  const sessions = registry;
  const answers = new AwaitedAnswers(limits.answerTimeoutMs);
  const madeHere = new MadeHere();
  store.onAnswer((callId, relayId, answer) => answers.answer(callId, relayId, answer));
  const modernOf = (view: string | undefined, endpoint: ViewSessionDeps): ModernEdge =>
    modernEdge({
      endpoint,
      view,
      logger,
      serverInfo: { name: "toolbus", version },
      answerTimeoutMs: limits.answerTimeoutMs,
      elicitApprovals: edge.elicitApprovals,
      selfApprove: deps.selfApprove ?? false,
      store,
      answers,
      tasks: { afterMs: edge.taskAfterMs, ttlMs: taskTtlMs, madeHere },
      threads: {
        isSession: (id) => sessions.isSession(id),
        claimThread: (threadId, principal) => sessions.claimThread(threadId, principal),
      },
      // With auth on, a list is for the caller who asked; no shared cache may keep it.
      cacheScope: principals.length > 0 || oauth !== undefined ? "private" : "public",
      bodyLimitBytes: limits.bodyLimitBytes,
    });
  modern.set("", modernOf(undefined, { ports, resources, prompts, instructions: instructionsOf(ports) }));
  for (const [name, endpoint] of viewSessions) modern.set(name, modernOf(name, endpoint));

  const app = buildHttpApp({
    registry,
    logger,
    allowedHosts: edge.allowedHosts,
    principals,
    ...(oauth ? { oauth } : {}),
    ...(signin ? { signin } : {}),
    ...(edge.publicUrl === undefined ? {} : { publicUrl: edge.publicUrl }),
    streams: { total: edge.maxStreams, perClient: edge.maxStreamsPerClient },
    maxBatchSize: edge.maxBatchSize,
    bodyLimitBytes: limits.bodyLimitBytes,
    readiness: () => ({ bus: health.connected(), catalog: catalog.loaded }),
    views,
    modern: (view) => modern.get(view?.name ?? "") as ModernEdge,
    // Only when some tool requires scopes: no lookup per call otherwise.
    ...(Object.keys(deps.toolScopes ?? {}).length === 0
      ? {}
      : {
          scopesFor: async (tool: string, view: GatewayView | undefined, principal: Principal) => {
            const state = await catalog.current();
            const entry = (view ? view.catalog(state) : state).table.resolve(tool);
            const required = entry === undefined ? [] : requiredScopes(deps.toolScopes, entry);
            return { required, missing: missingScopes(required, principal) };
          },
        }),
  });
  metrics.countRequests(app);
  // REST, SSE, OpenAPI and the console beside /mcp, behind the same host and token checks.
  await app.register(
    restApi({
      bus,
      subjects,
      dispatch: metrics.countingCalls(dispatch, "rest"),
      approvals,
      calls,
      threads: {
        isSession: (id) => sessions.isSession(id),
        claim: (threadId, principal) => sessions.claimThread(threadId, principal),
      },
      logger,
      exposedNames: async () => (catalog.loaded ? (await catalog.current()).table : undefined),
      bodyLimitBytes: limits.bodyLimitBytes,
    }),
  );
  await app.register(eventsSse({ nc: bus.nc, subjects, logger }));
  await app.register(openApi({ version, auth: principals.length > 0 || oauth !== undefined }));
  await app.register(consolePage());
  for (const plugin of deps.plugins ?? []) await app.register(plugin);
  const address = await app.listen({ port: deps.gateway.port, host: deps.gateway.host });
  // A wildcard bind is reached on loopback from this host.
  const url = address.replace("://0.0.0.0", "://127.0.0.1");
  logger.info({ url, naming: deps.gateway.naming }, `gateway listening on ${url}/mcp`);

  let stopping: Promise<void> | undefined;
  const stopObserving = metrics.observeSessions(() => sessions.size);
  return {
    url,
    app,
    sessions: () => sessions.size,
    ready: () => health.connected() && catalog.loaded,
    drain: (options) => bus.drain(options),
    // Stops listening, closes every session and the bus subscriptions.
    stop: () => {
      stopping ??= (async () => {
        catalog.stop();
        promptsChanged.unsubscribe();
        approvals.stop();
        relay.stop();
        store.stop();
        await sessions.closeAll();
        await Promise.all([...modern.values()].map((edge) => edge.close()));
        answers.clear();
        stopObserving();
        // Requests in flight get a moment to finish; then whatever connection is left is cut, so
        // a stop never waits on a client (seen: a pnpm start that never exited on Ctrl-C).
        const cut = setTimeout(() => app.server.closeAllConnections(), CLOSE_GRACE_MS);
        await app.close();
        clearTimeout(cut);
      })();
      return stopping;
    },
  };
}

/**
 * `[gateway.oauth]` as a resource server for `/mcp` (and the root for the rest), or undefined
 * when the table is absent. A missing introspection secret stops the start, as a bad config does.
 */
function oauthResourceServer(deps: GatewayServiceDeps): OAuthResourceServer | undefined {
  const config = deps.gateway.oauth;
  if (config === undefined) return undefined;
  let introspectionSecret: string | undefined;
  if (config.introspection !== undefined) {
    const secret = resolveIntrospectionSecret(config.introspection, deps.env ?? process.env);
    if (!secret.ok) throw new ConfigError([secret.message]);
    introspectionSecret = secret.secret;
  }
  return createOAuthResourceServer({
    config,
    // Each view is a resource of its own (its own audience): a token for one is refused on another.
    resourcePaths: [...(deps.views ?? []).map((view) => viewPath(view.name)), MCP_PATH],
    ...(introspectionSecret === undefined ? {} : { introspectionSecret }),
    ...(deps.limits?.oauth ? { limits: deps.limits.oauth } : {}),
  });
}

/**
 * `[gateway.signin]`: browser sign-in for the console and the inbox at the issuer of `oauth`, or
 * undefined when the table is absent. A missing secret stops the start, as a bad config does.
 */
function browserSignIn(deps: GatewayServiceDeps, oauth: OAuthResourceServer): BrowserSignIn | undefined {
  const config = deps.gateway.signin;
  if (config === undefined) return undefined;
  const secrets = resolveSignInSecrets(config, deps.env ?? process.env);
  if (!secrets.ok) throw new ConfigError([secrets.message]);
  const logger = deps.logger.child({ component: "signin" });
  if (secrets.sessionSecret === undefined) {
    logger.warn(
      "sign-in sessions are sealed with a key of this process: they end when it stops and hold on no other replica; set [gateway.signin] session_secret_env to keep them",
    );
  }
  return createBrowserSignIn({
    config,
    oauth,
    ...(deps.gateway.publicUrl === undefined ? {} : { publicUrl: deps.gateway.publicUrl }),
    ...(secrets.clientSecret === undefined ? {} : { clientSecret: secrets.clientSecret }),
    ...(secrets.sessionSecret === undefined ? {} : { sessionSecret: secrets.sessionSecret }),
    onEvent: ({ event, ...details }) => logger.info(details, event),
  });
}

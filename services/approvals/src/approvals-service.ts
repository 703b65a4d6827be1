/**
 * `startApprovalsService({ bus, config })`: the whole service on the bus it is given — Postgres
 * (migrated), the grants bucket, the LISTEN connection, the six endpoints, the expiry sweep and
 * the HTTP inbox — and the handle that drains and stops it. main.ts and the tests both start it
 * this way. Its own HTTP routes call the list and resolve handlers directly: no bus round trip to
 * itself.
 */
import type { AddressInfo } from "node:net";
import {
  type Bus,
  ConfigError,
  createLogger,
  type Logger,
  loadConfig,
  observeGauge,
  type RunningService,
  verifyAssets,
  withSpan,
} from "@toolbus/bus";
import { checkBind, installHttpGuard, installProbes } from "@toolbus/http-guard";
import { approvalModeOf, EffectivePolicySchema } from "@toolbus/policy";
import {
  ApprovalCancelRequestSchema,
  ApprovalDecideRequestSchema,
  ApprovalResolveRequestSchema,
  ApprovalsListRequestSchema,
  createSubjects,
  ForgetThreadsRequestSchema,
  identityOf,
  internalSubjects,
  PostToolUseRequestSchema,
  principalRefusal,
  QueueGroup,
  type Subjects,
  TOOLBUS_VERSION,
  WireError,
} from "@toolbus/protocol";
import fastify, { LogController } from "fastify";
import pg from "pg";
import { createHookRunner } from "./adapters/hooks/hook-runner.js";
import { type ApprovalsHttpDeps, buildApprovalsHttp } from "./adapters/http/approvals-http.js";
import { natsApprovalEvents, subscribeInboxEvents } from "./adapters/nats/approval-events.js";
import { publishPolicy } from "./adapters/nats/policy-publisher.js";
import { KvSessionGrants } from "./adapters/nats/session-grants.js";
import { decisionChannel, PgDecisionSignals } from "./adapters/pg/decision-signals.js";
import { migrate } from "./adapters/pg/migrations.js";
import { PgPendingStore } from "./adapters/pg/pending-requests.js";
import { PgPersistentGrants } from "./adapters/pg/persistent-grants.js";
import {
  type ApprovalsServiceConfig,
  type ApprovalsServiceConfigInput,
  ApprovalsServiceConfigSchema,
} from "./config.js";
import { DecisionWaiters } from "./decision-waiters.js";
import { handleCancel } from "./handlers/cancel.js";
import { handleDecide } from "./handlers/decide.js";
import { expireOverdue } from "./handlers/expire-overdue.js";
import { handleForgetThreads } from "./handlers/forget-threads.js";
import { handleList } from "./handlers/list.js";
import { handlePostToolUse } from "./handlers/post-tool-use.js";
import { handleResolve } from "./handlers/resolve.js";
import { APPROVALS_METRICS, decisionCounter, recordingWaits } from "./metrics.js";
import type { ApprovalPorts } from "./ports.js";

export const SERVICE_NAME = "approvals";

export interface ApprovalsServiceDeps {
  /** Connected with the approvals identity (`connectServiceBus`, role `approvals`); not closed here. */
  bus: Bus;
  config: ApprovalsServiceConfigInput;
  /** Default: a new root logger `{service:"approvals", version}` at `config.logLevel`. */
  logger?: Logger;
}

export interface ApprovalsService extends RunningService {
  readonly config: Readonly<ApprovalsServiceConfig>;
  readonly subjects: Subjects;
  /** `http://<host>:<port>` of the inbox and REST routes; undefined with `http: false`. */
  readonly httpUrl: string | undefined;
  /**
   * What the HTTP routes need, answered by this replica directly (list and resolve without a bus
   * hop): `buildApprovalsHttp(service.inbox)` mounts them on another server in the same process.
   */
  readonly inbox: ApprovalsHttpDeps;
}

export async function startApprovalsService(deps: ApprovalsServiceDeps): Promise<ApprovalsService> {
  const { bus } = deps;
  const config = loadConfig(ApprovalsServiceConfigSchema, deps.config);
  if (config.http !== false) {
    const bind = checkBind({
      host: config.http.host,
      authenticated: config.http.principals.length > 0,
      allowUnauthenticated: config.http.allowUnauthenticated,
      what: "the approvals inbox",
    });
    if (!bind.ok) throw new ConfigError([bind.message]);
  }
  const logger =
    deps.logger ?? createLogger({ service: SERVICE_NAME, version: TOOLBUS_VERSION, level: config.logLevel });
  const subjects = createSubjects(config.prefix);
  const closers: Array<() => Promise<void>> = [];
  const closeAll = async () => {
    for (const close of closers.splice(0).reverse()) {
      await close().catch((err: unknown) => logger.error({ err }, "approvals: a resource failed to close"));
    }
  };

  try {
    const pool = new pg.Pool({ connectionString: config.databaseUrl, max: config.poolSize });
    pool.on("error", (err) =>
      logger.warn({ err }, "an idle Postgres connection failed; the pool replaces it"),
    );
    closers.push(() => pool.end());
    const applied = await migrate(pool);
    if (applied.length > 0) logger.info({ applied }, `applied approvals migrations ${applied.join(", ")}`);

    // Nothing starts on streams the provisioner did not make, or someone changed since.
    await verifyAssets(await bus.jsm(), identityOf("approvals"), subjects);
    const grantsKv = await bus.kv(subjects.kv.approvalGrants);

    const channel = decisionChannel(config.prefix);
    const waiters = new DecisionWaiters();
    const signals = new PgDecisionSignals({ connectionString: config.databaseUrl }, channel, waiters, logger);
    await signals.start();
    closers.push(() => signals.close());

    const closing = new AbortController();
    const now = () => Date.now();
    const pending = new PgPendingStore(pool, channel, waiters);
    const stopObserving = observeGauge(APPROVALS_METRICS.instrument("pending"), async (result) =>
      result.observe(await pending.countPending(now())),
    );
    closers.push(async () => stopObserving());
    const countDecision = decisionCounter();
    // What this replica decides with, published for the dispatchers before it serves a decide.
    const policy = EffectivePolicySchema.parse({
      policy: config.policy,
      permissionProfile: config.permissionProfile,
      servers: config.servers,
      hooks: config.hooks,
      timeoutMs: config.timeoutMs,
    });
    const policyKv = await bus.kv(internalSubjects(config.prefix).kv.approvalPolicy);
    const policyRevision = await publishPolicy(policyKv, policy);
    logger.info({ policyRevision }, "published the effective approval policy");
    const ports: ApprovalPorts = {
      policy: policy.policy,
      permissionProfile: policy.permissionProfile,
      hooks: policy.hooks,
      timeoutMs: policy.timeoutMs,
      pollIntervalMs: config.pollIntervalMs,
      modeOf: (server, tool) => approvalModeOf(policy.servers, server, tool),
      hookRunner: createHookRunner({ maxConcurrentHooks: config.maxConcurrentHooks }),
      sessionGrants: new KvSessionGrants(grantsKv),
      persistentGrants: new PgPersistentGrants(pool),
      pending: recordingWaits(pending, now),
      signals: waiters,
      events: natsApprovalEvents(bus, subjects),
      now,
      closing: closing.signal,
    };

    const queue = QueueGroup.approvals;
    await bus.serve(
      { subject: subjects.approvalsDecide, name: "decide", request: ApprovalDecideRequestSchema, queue },
      async (request, ctx) => {
        const result = await handleDecide(request, ports, { logger: ctx.logger, signal: ctx.signal });
        countDecision(result);
        return result;
      },
    );
    await bus.serve(
      {
        subject: subjects.approvalsPostToolUse,
        name: "post_tool_use",
        request: PostToolUseRequestSchema,
        queue,
      },
      (request, ctx) => handlePostToolUse(request, ports, { logger: ctx.logger }),
    );
    await bus.serve(
      { subject: subjects.approvalsList, name: "list", request: ApprovalsListRequestSchema, queue },
      (request) => handleList(request, ports),
    );
    await bus.serve(
      {
        subject: subjects.approvalsResolve,
        name: "resolve",
        request: ApprovalResolveRequestSchema,
        queue,
        // Who answers (`by`) is believed only from the gateway.
        taggedBySender: true,
      },
      (request, ctx) => {
        const refused = principalRefusal(ctx.sender, "by", request.by);
        if (refused !== undefined) throw new WireError("unauthorized", refused);
        return handleResolve(request, ports, { logger: ctx.logger, selfApprove: config.selfApprove });
      },
    );
    await bus.serve(
      { subject: subjects.approvalsCancel, name: "cancel", request: ApprovalCancelRequestSchema, queue },
      (request) => handleCancel(request, ports),
    );
    await bus.serve(
      {
        subject: subjects.approvalsForgetThreads,
        name: "forget_threads",
        request: ForgetThreadsRequestSchema,
        queue,
      },
      (request, ctx) =>
        handleForgetThreads(request, ports).then((result) => {
          ctx.logger.info({ threads: request.threadIds.length, ...result }, "forgot ended sessions' grants");
          return result;
        }),
    );

    const sweep = setInterval(() => {
      expireOverdue(ports).catch((err: unknown) =>
        logger.error({ err }, "expiring overdue approval requests failed"),
      );
    }, config.sweepIntervalMs);
    closers.push(async () => clearInterval(sweep));

    const inbox = localInbox(ports, bus, subjects, logger, config.selfApprove);
    let httpUrl: string | undefined;
    if (config.http !== false) {
      const app = await listenHttp(config.http, inbox, bus, logger);
      closers.push(async () => {
        await app.close();
      });
      const address = app.server.address() as AddressInfo;
      httpUrl = `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`;
      logger.info({ url: httpUrl }, `approvals inbox at ${httpUrl}/approvals`);
    }

    // Decides still waiting for a human answer `server_unavailable` (retryable: the dispatcher
    // sends them again, to another replica, and they re-attach).
    const endWaits = () => {
      clearInterval(sweep);
      closing.abort(new Error("the approvals service is stopping"));
    };
    let drained: Promise<void> | undefined;
    return {
      config,
      subjects,
      httpUrl,
      inbox,
      drain: (drainOptions) => {
        drained ??= (async () => {
          endWaits();
          await bus.drain({ graceMs: drainOptions?.graceMs ?? config.shutdownGraceMs });
        })();
        return drained;
      },
      // HTTP, the LISTEN connection and Postgres.
      stop: async () => {
        endWaits();
        await closeAll();
      },
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}

/** Span of a resolve answered for this replica's own HTTP routes (over the bus: `approvals.resolve`). */
const RESOLVE_SPAN = `${SERVICE_NAME}.resolve`;

/**
 * The HTTP routes' dependencies on this replica: the handlers themselves (a human's click reaches
 * the waiting decide without a bus round trip to this process), live events from the bus.
 */
function localInbox(
  ports: ApprovalPorts,
  bus: Bus,
  subjects: Subjects,
  logger: Logger,
  selfApprove: boolean,
): ApprovalsHttpDeps {
  const httpLogger = logger.child({ component: "http" });
  return {
    list: (request) => handleList(request, ports),
    resolve: async (request) => {
      // A refusal is an answer, not a failure of the span (as when served over the bus).
      const outcome = await withSpan(RESOLVE_SPAN, { "toolbus.endpoint": "resolve" }, async (span) => {
        try {
          return { value: await handleResolve(request, ports, { logger: httpLogger, selfApprove }) };
        } catch (error) {
          if (!(error instanceof WireError)) throw error;
          span.setAttribute("toolbus.error.code", error.code);
          return { error };
        }
      });
      if ("error" in outcome) throw outcome.error;
      return outcome.value;
    },
    subscribe: (listener) => subscribeInboxEvents(bus, subjects, listener, logger),
  };
}

async function listenHttp(
  http: Exclude<ApprovalsServiceConfig["http"], false>,
  inbox: ApprovalsHttpDeps,
  bus: Bus,
  logger: Logger,
) {
  const httpLogger = logger.child({ component: "http" });
  const app = fastify({
    loggerInstance: httpLogger,
    logController: new LogController({ disableRequestLogging: true }),
    forceCloseConnections: true,
  });
  // The gateway's guard, as it is: Host/Origin, tokens and roles, security headers, stream limits.
  installHttpGuard(app, {
    allowedHosts: http.allowedHosts,
    principals: http.principals,
    streams: { total: http.maxStreams, perClient: http.maxStreamsPerClient },
    onRefused: (refused) => httpLogger.info(refused, "refused a request"),
  });
  await app.register(buildApprovalsHttp(inbox));
  // Probes for orchestrators: alive while the process serves HTTP; ready while the bus is connected.
  installProbes(app, () => ({ bus: !bus.nc.isClosed() }));
  await app.listen({ host: http.host, port: http.port });
  return app;
}

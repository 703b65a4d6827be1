/**
 * The bus one service process holds: its NATS connection (reconnecting forever), the NATS
 * micro service its endpoints belong to, typed request/reply, trace-carrying publishes, and
 * the drain that lets in-flight work finish before the process exits.
 */
import { setMaxListeners } from "node:events";
import { type JetStreamClient, type JetStreamManager, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { type KV, Kvm } from "@nats-io/kv";
import {
  AuthorizationError,
  connect,
  type NatsConnection,
  type NodeConnectionOptions,
  headers as natsHeaders,
  nkeyAuthenticator,
  nuid,
  PermissionViolationError,
  type Status,
  usernamePasswordAuthenticator,
} from "@nats-io/transport-node";
import { type Identity, JS_API, type Role, taggedSubject } from "@toolbus/protocol";
import type { Logger } from "pino";
import type { z } from "zod";
import { connectCoalescing } from "./coalescing-transport.js";
import type { EventDeliveryLimits } from "./core/backoff.js";
import { jetStreamFailureOf } from "./core/jetstream-failure.js";
import { maskUrl } from "./core/mask-url.js";
import { StaleSubjects } from "./core/stale-subjects.js";
import { EventPublisher, type PublishEventOptions, storeInStream } from "./events.js";
import { LargeReplies, lateReplyHandler } from "./large-replies.js";
import { BUS_METRICS, type BusInstruments } from "./metrics.js";
import { MicroService } from "./micro-service.js";
import { hasCredentials, type NatsAccess, natsAccessFromEnv, natsServers } from "./nats-identity.js";
import { ReplyInbox } from "./reply-inbox.js";
import { type RequestOptions, requestReply } from "./request.js";
import { type EndpointSpec, endpointCallback, type Handler } from "./serve.js";
import { injectTraceContext } from "./tracing.js";

export interface ServiceIdentity {
  /** The micro-service name (`$SRV.INFO.<name>`) and default queue group: letters, digits, `-`, `_`. */
  name: string;
  /** Semver. */
  version: string;
  description?: string;
}

export interface ConnectBusOptions {
  /** One URL or a comma-separated list; used when `access` is not given (no credentials). */
  natsUrl?: string;
  /** Servers, credentials, TLS and inbox prefix (see `natsAccessFromEnv`). */
  access?: NatsAccess;
  service: ServiceIdentity;
  logger: Logger;
  /** Log once per process that the bus has no credentials (default true). */
  warnUnauthenticated?: boolean;
  /** How unacknowledged events are retried and how many are held; default `DEFAULT_EVENT_DELIVERY`. */
  events?: Partial<EventDeliveryLimits>;
}

export interface DrainOptions {
  /** How long in-flight handlers may still run; then their `ctx.signal` aborts. Default 30 s. */
  graceMs?: number;
}

export interface Bus {
  readonly nc: NatsConnection;
  readonly service: Readonly<ServiceIdentity>;
  /**
   * This process's instance of its service, `<name>.<id>`: the micro service answers
   * `$SRV.PING.<instance>` while the process lives (see `instanceAlive`).
   */
  readonly instance: string;
  readonly logger: Logger;
  /**
   * Replicas every stream and KV bucket asks for (`TOOLBUS_JS_REPLICAS`, see `natsAccessFromEnv`):
   * 1 on a single nats-server, the node count on a cluster. The provisioner creates them so.
   */
  readonly replicas: number;
  /** Where this connection reaches JetStream's API (`NatsAccess.jsApiPrefix`). */
  readonly jsApiPrefix: string;
  js(): JetStreamClient;
  jsm(): Promise<JetStreamManager>;
  kvm(): Kvm;
  /**
   * A bucket the provisioner made, bound without a look-up and read by direct get (by key: the
   * only way an identity's account reads a bucket).
   */
  kv(bucket: string): Promise<KV>;
  /** Registers an endpoint of this process's micro service; it answers once the promise resolves. */
  serve<S extends z.ZodType, Res>(spec: EndpointSpec<S>, handler: Handler<z.output<S>, Res>): Promise<void>;
  /** Throws `WireError` for every failure: the callee's own, `server_unavailable`, `timeout`, … */
  request<S extends z.ZodType>(
    subject: string,
    body: unknown,
    resultSchema: S,
    options?: RequestOptions,
  ): Promise<z.output<S>>;
  /** Core NATS publish (no delivery guarantee) with the trace context in the headers. */
  publish(subject: string, body: unknown): void;
  /** JetStream publish; returns at once, the ack is tracked (see `flushEvents`). */
  publishEvent(subject: string, body: unknown, options?: PublishEventOptions): void;
  /** Events published and not yet acknowledged (in flight or waiting to be retried). */
  readonly pendingEvents: number;
  /**
   * What became of a JetStream request on `subject`: taken (no `failure`), or the error it failed
   * with. Only failures nobody answered (no responders, a timeout: `jetStreamFailureOf`) count:
   * one subject unanswered again and again renews the connection (see `StaleSubjects`).
   */
  jetStreamOutcome(subject: string, failure?: unknown): void;
  /**
   * Resolves when every event published so far has been acked or given up on (while JetStream
   * is down, at most the retry budget after the last publish).
   */
  flushEvents(): Promise<void>;
  /** Stops serving (queued requests are still delivered) and waits for in-flight handlers. */
  drain(options?: DrainOptions): Promise<void>;
  /** Flushes events, then drains and closes the connection. */
  close(): Promise<void>;
}

const DEFAULT_GRACE_MS = 30_000;
/** How long closing waits for events JetStream has not acknowledged yet. */
const CLOSE_FLUSH_MS = 10_000;

export async function connectBus(options: ConnectBusOptions): Promise<Bus> {
  const { logger } = options;
  const access: NatsAccess = options.access ?? { servers: natsServers(options.natsUrl) };
  const shown = access.servers.map(maskUrl).join(",");
  logger.info({ natsUrl: shown }, `connecting to NATS at ${shown}`);
  if (options.warnUnauthenticated !== false && !hasCredentials(access)) warnUnauthenticated(logger, shown);
  await refuseFatalFirstConnect(access, shown);
  let nc: NatsConnection;
  try {
    nc = await connectCoalescing({
      ...natsConnectionOptions(access),
      name: `${options.service.name}@${options.service.version}`,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1_000,
      waitOnFirstConnect: true,
      // nats.js otherwise captures a stack trace per request: measurable CPU on the hot path.
      noAsyncTraces: true,
    });
  } catch (error) {
    throw connectFailure(error, access, shown);
  }
  logger.info({ natsUrl: shown, server: nc.getServer() }, "connected to NATS");
  void logStatus(nc, logger);
  return new NatsBus(
    nc,
    options.service,
    logger,
    access.inboxPrefix,
    access.jetStreamReplicas ?? 1,
    access.jsApiPrefix ?? JS_API,
    access.identity,
    options.events,
  );
}

/** A toolbus service's bus: its role's identity read from `env` (see `natsAccessFromEnv`). */
export async function connectServiceBus(options: {
  env: Readonly<Record<string, string | undefined>>;
  prefix: string;
  /** The role, or the identity (a connector's). */
  role: Role | Identity;
  service: ServiceIdentity;
  logger: Logger;
}): Promise<Bus> {
  const access = natsAccessFromEnv(
    options.env,
    typeof options.role === "string"
      ? { prefix: options.prefix, role: options.role }
      : { prefix: options.prefix, identity: options.role },
  );
  return connectBus({ access, service: options.service, logger: options.logger });
}

let warnedUnauthenticated = false;
/** Said once per process: every service of `pnpm start` shares the one warning. */
function warnUnauthenticated(logger: Logger, shown: string): void {
  if (warnedUnauthenticated) return;
  warnedUnauthenticated = true;
  logger.warn(
    { natsUrl: shown },
    `NATS at ${shown} is used without credentials: anyone who can reach it can call any tool, skipping approvals. ` +
      "Give each service its identity (toolbus nats-config; NATS_NKEY_FILE) to close the bus.",
  );
}

/** nats.js connection options for an access: servers, authenticator, inbox prefix, TLS. */
export function natsConnectionOptions(access: NatsAccess): NodeConnectionOptions {
  const options: NodeConnectionOptions = { servers: access.servers };
  if (access.nkeySeed !== undefined) {
    options.authenticator = nkeyAuthenticator(new TextEncoder().encode(access.nkeySeed));
  } else if (access.user !== undefined) {
    options.authenticator = usernamePasswordAuthenticator(access.user, access.password ?? "");
  }
  if (access.inboxPrefix !== undefined) options.inboxPrefix = access.inboxPrefix;
  const tlsUrl = access.servers.some((server) => server.startsWith("tls://"));
  if (access.tls !== undefined || tlsUrl) {
    options.tls = {
      ...(access.tls?.caFile ? { caFile: access.tls.caFile } : {}),
      ...(access.tls?.certFile ? { certFile: access.tls.certFile } : {}),
      ...(access.tls?.keyFile ? { keyFile: access.tls.keyFile } : {}),
    };
  }
  return options;
}

/**
 * One attempt before waiting for NATS: a server that is not up yet is waited for (services may
 * start first), but one that refuses these credentials or whose TLS certificate cannot be
 * verified will refuse every retry too, so that is reported at once instead of retried forever.
 */
async function refuseFatalFirstConnect(access: NatsAccess, shown: string): Promise<void> {
  try {
    const probe = await connect({ ...natsConnectionOptions(access), reconnect: false, timeout: 5_000 });
    await probe.close();
  } catch (error) {
    const reason = error instanceof Error ? `${error.message} ${String(error.cause ?? "")}` : String(error);
    if (
      error instanceof AuthorizationError ||
      /authoriz|authentic|certificate|tls|ssl|altnames/i.test(reason)
    ) {
      throw connectFailure(error, access, shown);
    }
  }
}

/** One line that names what is wrong: refused credentials, or no server reachable. */
function connectFailure(error: unknown, access: NatsAccess, shown: string): Error {
  const reason = error instanceof Error ? error.message : String(error);
  if (error instanceof AuthorizationError || /authoriz|authentic/i.test(reason)) {
    const who = access.credentialSource ?? "no credentials";
    return new Error(
      `NATS at ${shown} refused this identity (${who}): ${reason}. ` +
        (access.credentialSource === undefined
          ? "The server requires credentials: set NATS_NKEY_FILE to this service's seed file from `toolbus nats-config`."
          : "Check that the file belongs to this service and that the server's config includes the auth.conf written with it (toolbus nats-config)."),
      { cause: error },
    );
  }
  if (/certificate|tls|ssl|altnames/i.test(reason)) {
    return new Error(
      `cannot connect to NATS at ${shown}: TLS failed (${reason}). ` +
        "Give the CA that signed the server's certificate in NATS_TLS_CA_FILE, and reach the server by a name its certificate holds.",
      { cause: error },
    );
  }
  return new Error(`cannot connect to NATS at ${shown}: ${reason}`, { cause: error });
}

async function logStatus(nc: NatsConnection, logger: Logger): Promise<void> {
  // Closed by its process (a stop a person asked for) is not news; closed by a failure is.
  void nc.closed().then((error) => {
    if (error) logger.error({ err: error }, "NATS connection closed by an error; it will not reconnect");
    else logger.debug("NATS connection closed");
  });
  for await (const status of nc.status()) logStatusChange(logger, status);
}

/** Where NATS maps the reply subject of a request that crossed accounts (each identity has its own). */
const IMPORTED_REPLY_PREFIX = "_R_.";

function logStatusChange(logger: Logger, status: Status): void {
  switch (status.type) {
    case "disconnect":
      logger.warn({ server: status.server }, "disconnected from NATS; reconnecting");
      return;
    case "reconnect":
      logger.info({ server: status.server }, "reconnected to NATS");
      return;
    case "reconnecting":
      logger.debug("trying to reconnect to NATS");
      return;
    case "ldm":
      logger.warn(
        { server: status.server },
        "NATS server entering lame-duck mode; it will close connections soon",
      );
      return;
    case "error":
      if (status.error instanceof PermissionViolationError) {
        const { operation, subject } = status.error;
        if (operation === "publish" && subject.startsWith(IMPORTED_REPLY_PREFIX)) {
          // A connection may answer only the requests it was given, within their reply window:
          // an answer to one received before a reconnect is refused. Expected while a node fails
          // over, not a misconfiguration.
          logger.warn(
            { operation, subject },
            `NATS refused the reply on ${subject}: its request came before this connection moved to another node, or its reply window (2 minutes) had closed; its caller gets no answer and must ask again`,
          );
          return;
        }
        logger.error(
          { operation, subject },
          `NATS refused ${operation} on ${subject}: this identity's permissions do not include it`,
        );
        return;
      }
      logger.error({ err: status.error }, "NATS connection error");
      return;
    case "staleConnection":
      logger.warn("NATS connection is stale (pings unanswered); reconnecting");
      return;
    case "slowConsumer":
      logger.warn(
        { subject: status.sub.getSubject(), pending: status.pending },
        "slow consumer: messages are piling up",
      );
      return;
    case "close":
      return;
    case "forceReconnect":
    case "update":
    case "ping":
      return;
  }
}

/**
 * The controller, its signal allowed any number of listeners: node warns of a leak past 10, which
 * a long-lived signal with one listener per call in flight passes under load without leaking.
 */
function withoutListenerCap(controller: AbortController): AbortController {
  setMaxListeners(0, controller.signal);
  return controller;
}

class NatsBus implements Bus {
  readonly nc: NatsConnection;
  readonly service: Readonly<ServiceIdentity>;
  readonly #instanceId = nuid.next();
  readonly logger: Logger;
  readonly replicas: number;
  readonly jsApiPrefix: string;
  readonly #inbox: ReplyInbox;
  readonly #events: EventPublisher;
  readonly #largeReplies: LargeReplies;
  readonly #inFlight = new Set<Promise<void>>();
  /** Handlers' `ctx.signal`, which each call in flight may listen to until it settles. */
  readonly #abort = withoutListenerCap(new AbortController());
  #js: JetStreamClient | undefined;
  #jsm: Promise<JetStreamManager> | undefined;
  #kvm: Kvm | undefined;
  #micro: MicroService | undefined;
  #metrics: BusInstruments | undefined;
  readonly #staleSubjects = new StaleSubjects();

  constructor(
    nc: NatsConnection,
    service: ServiceIdentity,
    logger: Logger,
    inboxPrefix: string | undefined,
    replicas: number,
    jsApiPrefix: string,
    /** This identity's name (`NatsAccess.identity`); default the service's. */
    identity: string | undefined,
    events: Partial<EventDeliveryLimits> = {},
  ) {
    this.nc = nc;
    this.replicas = replicas;
    this.jsApiPrefix = jsApiPrefix;
    this.service = Object.freeze({ ...service });
    this.logger = logger;
    this.#largeReplies = new LargeReplies(
      () => this.jsm(),
      () => this.js(),
      () => this.nc.info?.max_payload ?? 1024 * 1024,
      identity ?? service.name,
    );
    this.#inbox = new ReplyInbox(nc, inboxPrefix, lateReplyHandler(logger));
    this.#events = new EventPublisher(storeInStream(this.#inbox), logger, { limits: events });
  }

  get instance(): string {
    return `${this.service.name}.${this.#instanceId}`;
  }

  jetStreamOutcome(subject: string, failure?: unknown): void {
    if (failure === undefined) {
      this.#staleSubjects.succeeded(subject, Date.now());
      return;
    }
    // Refused for what it is (too large, not permitted): a new connection would be refused alike.
    if (jetStreamFailureOf(failure) !== "unanswered") return;
    if (!this.#staleSubjects.failed(subject, Date.now()) || this.nc.isClosed()) return;
    this.logger.warn(
      { subject, server: this.nc.getServer() },
      "NATS keeps refusing JetStream requests on one subject that JetStream serves: renewing the connection",
    );
    void this.nc.reconnect().catch((error: unknown) => {
      this.logger.warn({ err: error }, "renewing the NATS connection failed");
    });
  }

  js(): JetStreamClient {
    this.#js ??= jetstream(this.nc, { apiPrefix: this.jsApiPrefix });
    return this.#js;
  }

  jsm(): Promise<JetStreamManager> {
    // No `$JS.API.INFO` first: an identity's account reaches only the API of the assets it uses.
    this.#jsm ??= jetstreamManager(this.nc, { apiPrefix: this.jsApiPrefix, checkAPI: false });
    return this.#jsm;
  }

  kvm(): Kvm {
    this.#kvm ??= new Kvm(this.js());
    return this.#kvm;
  }

  kv(bucket: string): Promise<KV> {
    // nats.js types leave `allow_direct` out of open's options, though it reads it.
    return this.kvm().open(bucket, { allow_direct: true } as never);
  }

  async serve<S extends z.ZodType, Res>(
    spec: EndpointSpec<S>,
    handler: Handler<z.output<S>, Res>,
  ): Promise<void> {
    this.#micro ??= new MicroService(this.nc, this.service, this.logger, this.#instanceId);
    // Created with the first endpoint, so on the meter provider startTelemetry registered.
    this.#metrics ??= BUS_METRICS.create();
    const answer = endpointCallback(
      {
        service: this.service.name,
        logger: this.logger,
        signal: this.#abort.signal,
        maxPayload: () => this.nc.info?.max_payload ?? 1024 * 1024,
        metrics: this.#metrics,
        largeReplies: this.#largeReplies,
      },
      spec,
      handler,
    );
    const subscriptions = this.#micro.addEndpoint(
      {
        name: spec.name,
        subject: spec.subject,
        ...(spec.taggedBySender ? { alsoOn: [taggedSubject(spec.subject, "*")] } : {}),
        queue: spec.queue ?? this.service.name,
        ...(spec.metadata === undefined ? {} : { metadata: spec.metadata }),
      },
      (msg) => {
        const running = answer(msg);
        const settled = running.then(
          () => undefined,
          () => undefined,
        );
        this.#inFlight.add(settled);
        void settled.then(() => this.#inFlight.delete(settled));
        return running;
      },
    );
    // The subscription reaches the server before serve() resolves, so a request sent next is answered.
    await this.nc.flush();
    // A refused subscription is answered before the flush's PONG: a service that may not serve
    // its own subject stops here, saying so, instead of running deaf.
    for (const subscription of subscriptions) {
      if (!subscription.isClosed()) continue;
      const refused = await subscription.closed;
      if (refused instanceof PermissionViolationError) {
        throw new Error(
          `NATS does not let this identity serve ${subscription.getSubject()}: its permissions do not include it. ` +
            `Is NATS_NKEY_FILE the ${this.service.name} service's own key (toolbus nats-config)?`,
          { cause: refused },
        );
      }
    }
    this.logger.info({ subject: spec.subject, endpoint: spec.name }, `serving ${spec.subject}`);
  }

  request<S extends z.ZodType>(
    subject: string,
    body: unknown,
    resultSchema: S,
    options?: RequestOptions,
  ): Promise<z.output<S>> {
    return requestReply(this.#inbox, subject, body, resultSchema, options, this.#largeReplies);
  }

  publish(subject: string, body: unknown): void {
    this.nc.publish(subject, JSON.stringify(body), { headers: injectTraceContext(natsHeaders()) });
  }

  publishEvent(subject: string, body: unknown, options?: PublishEventOptions): void {
    this.#events.publish(subject, body, options);
  }

  flushEvents(): Promise<void> {
    return this.#events.flush();
  }

  get pendingEvents(): number {
    return this.#events.pendingCount;
  }

  async drain(options: DrainOptions = {}): Promise<void> {
    const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
    await this.#micro?.stop();
    const finished = await settledWithin([...this.#inFlight], graceMs);
    if (!finished) {
      this.logger.warn(
        { inFlight: this.#inFlight.size, graceMs },
        `${this.#inFlight.size} request(s) still running after ${graceMs} ms; aborting them`,
      );
      this.#abort.abort(new Error("the service is shutting down"));
      await settledWithin([...this.#inFlight], 1_000);
    }
  }

  async close(): Promise<void> {
    // Bounded: a NATS or JetStream gone for good (Ctrl-C reaches a local nats-server too) must not
    // hold a stopping process for the events' whole retry budget.
    if (!(await settledWithin([this.flushEvents()], CLOSE_FLUSH_MS))) {
      this.logger.warn(
        { pending: this.pendingEvents },
        `${this.pendingEvents} event(s) not acknowledged by JetStream within ${CLOSE_FLUSH_MS / 1000} s of stopping; stopping without them`,
      );
    }
    if (!this.nc.isClosed()) {
      // A connection that is reconnecting cannot drain; closed instead, it stops trying.
      await this.nc.drain().catch(() => this.nc.close());
    }
    this.#abort.abort(new Error("the bus is closed"));
  }
}

/** True when every promise settled within `ms`. */
async function settledWithin(promises: Promise<unknown>[], ms: number): Promise<boolean> {
  if (promises.length === 0) return true;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const settled = Promise.allSettled(promises).then(() => true as const);
  try {
    return await Promise.race([settled, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

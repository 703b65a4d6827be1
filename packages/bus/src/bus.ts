/**
 * The bus one service process holds: its NATS connection (reconnecting forever), the NATS
 * micro service its endpoints belong to, typed request/reply, trace-carrying publishes, and
 * the drain that lets in-flight work finish before the process exits.
 */
import { type JetStreamClient, type JetStreamManager, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { type NatsConnection, headers as natsHeaders, type Status } from "@nats-io/transport-node";
import type { Logger } from "pino";
import type { z } from "zod";
import { connectCoalescing } from "./coalescing-transport.js";
import type { EventDeliveryLimits } from "./core/backoff.js";
import { EventPublisher, type PublishEventOptions, storeInStream } from "./events.js";
import { LargeReplies, lateReplyHandler } from "./large-replies.js";
import { BUS_METRICS, type BusInstruments } from "./metrics.js";
import { MicroService } from "./micro-service.js";
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
  natsUrl: string;
  service: ServiceIdentity;
  logger: Logger;
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
  readonly logger: Logger;
  js(): JetStreamClient;
  jsm(): Promise<JetStreamManager>;
  kvm(): Kvm;
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

export async function connectBus(options: ConnectBusOptions): Promise<Bus> {
  const { logger, natsUrl } = options;
  logger.info({ natsUrl }, `connecting to NATS at ${natsUrl}`);
  const nc = await connectCoalescing({
    servers: natsUrl,
    name: `${options.service.name}@${options.service.version}`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 1_000,
    waitOnFirstConnect: true,
    // nats.js otherwise captures a stack trace per request: measurable CPU on the hot path.
    noAsyncTraces: true,
  });
  logger.info({ natsUrl, server: nc.getServer() }, "connected to NATS");
  void logStatus(nc, logger);
  return new NatsBus(nc, options.service, logger, options.events);
}

async function logStatus(nc: NatsConnection, logger: Logger): Promise<void> {
  for await (const status of nc.status()) logStatusChange(logger, status);
}

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
      logger.info("NATS connection closed");
      return;
    case "forceReconnect":
    case "update":
    case "ping":
      return;
  }
}

class NatsBus implements Bus {
  readonly nc: NatsConnection;
  readonly service: Readonly<ServiceIdentity>;
  readonly logger: Logger;
  readonly #inbox: ReplyInbox;
  readonly #events: EventPublisher;
  readonly #largeReplies: LargeReplies;
  readonly #inFlight = new Set<Promise<void>>();
  readonly #abort = new AbortController();
  #js: JetStreamClient | undefined;
  #jsm: Promise<JetStreamManager> | undefined;
  #kvm: Kvm | undefined;
  #micro: MicroService | undefined;
  #metrics: BusInstruments | undefined;

  constructor(
    nc: NatsConnection,
    service: ServiceIdentity,
    logger: Logger,
    events: Partial<EventDeliveryLimits> = {},
  ) {
    this.nc = nc;
    this.service = Object.freeze({ ...service });
    this.logger = logger;
    this.#largeReplies = new LargeReplies(
      () => this.js(),
      () => this.nc.info?.max_payload ?? 1024 * 1024,
    );
    this.#inbox = new ReplyInbox(nc, lateReplyHandler(logger, this.#largeReplies));
    this.#events = new EventPublisher(storeInStream(this.#inbox), logger, { limits: events });
  }

  js(): JetStreamClient {
    this.#js ??= jetstream(this.nc);
    return this.#js;
  }

  jsm(): Promise<JetStreamManager> {
    this.#jsm ??= jetstreamManager(this.nc);
    return this.#jsm;
  }

  kvm(): Kvm {
    this.#kvm ??= new Kvm(this.js());
    return this.#kvm;
  }

  async serve<S extends z.ZodType, Res>(
    spec: EndpointSpec<S>,
    handler: Handler<z.output<S>, Res>,
  ): Promise<void> {
    this.#micro ??= new MicroService(this.nc, this.service, this.logger);
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
    this.#micro.addEndpoint(
      {
        name: spec.name,
        subject: spec.subject,
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
    await this.flushEvents();
    if (!this.nc.isClosed()) await this.nc.drain();
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

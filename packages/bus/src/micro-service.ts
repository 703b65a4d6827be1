/**
 * This process's NATS micro service (ADR-32): the `$SRV.PING/INFO/STATS` control subjects and
 * the endpoint subscriptions with their stats. Written here rather than taken from
 * @nats-io/services 3.0.0-25, which is built against nats-core 3.0.0-50 (its types clash with
 * 3.4.0) and times handlers synchronously, so async handlers would report no processing time
 * and no errors.
 */
import { type Msg, type NatsConnection, nuid, type Subscription } from "@nats-io/transport-node";
import type { Logger } from "pino";
import {
  controlSubjects,
  type EndpointDescriptor,
  type EndpointStats,
  emptyStats,
  identityProblem,
  infoResponse,
  pingResponse,
  recordRequest,
  type ServiceDescriptor,
  statsResponse,
  type Verb,
} from "./core/micro-protocol.js";

/** What answering one request came to: the error it was answered with, if any (counted in STATS). */
export interface Outcome {
  error?: string;
}

interface EndpointState {
  descriptor: EndpointDescriptor;
  stats: EndpointStats;
  subs: Subscription[];
}

export class MicroService {
  readonly descriptor: Readonly<ServiceDescriptor>;
  readonly #nc: NatsConnection;
  readonly #logger: Logger;
  readonly #endpoints: EndpointState[] = [];
  readonly #control: Subscription[] = [];
  #stopped: Promise<void> | undefined;

  constructor(
    nc: NatsConnection,
    identity: { name: string; version: string; description?: string; metadata?: Record<string, string> },
    logger: Logger,
    /** This instance's id (`$SRV.PING.<name>.<id>`); default a new one. */
    id: string = nuid.next(),
  ) {
    const problem = identityProblem("service", identity.name, identity.version);
    if (problem) throw new Error(problem);
    this.#nc = nc;
    this.#logger = logger;
    this.descriptor = Object.freeze({
      name: identity.name,
      id,
      version: identity.version,
      description: identity.description ?? "",
      metadata: { ...identity.metadata },
      started: new Date().toISOString(),
    });
    for (const { verb, subject } of controlSubjects(identity.name, this.descriptor.id)) {
      this.#control.push(
        nc.subscribe(subject, { callback: (err, msg) => this.#answerControl(verb, err, msg) }),
      );
    }
  }

  /**
   * Subscribes the endpoint in its queue group, on its subject and on each of `alsoOn` (one
   * endpoint, one set of stats); `handle` must answer the request itself. Answers the
   * subscriptions, `subject`'s first.
   */
  addEndpoint(
    endpoint: {
      name: string;
      subject: string;
      alsoOn?: readonly string[];
      queue: string;
      metadata?: Record<string, string>;
    },
    handle: (msg: Msg) => Promise<Outcome>,
  ): Subscription[] {
    const problem = identityProblem("endpoint", endpoint.name);
    if (problem) throw new Error(problem);
    if (this.#stopped)
      throw new Error(`service ${this.descriptor.name} is stopping; it takes no new endpoints`);
    const descriptor: EndpointDescriptor = {
      name: endpoint.name,
      subject: endpoint.subject,
      queue_group: endpoint.queue,
      metadata: { ...endpoint.metadata },
    };
    const stats = emptyStats();
    const subscribe = (subject: string) =>
      this.#nc.subscribe(subject, {
        queue: endpoint.queue,
        callback: (err, msg) => {
          if (err) {
            this.#logger.error({ err, subject }, `endpoint ${endpoint.name} stopped receiving requests`);
            return;
          }
          const started = process.hrtime.bigint();
          void handle(msg).then(
            (outcome) => recordRequest(stats, Number(process.hrtime.bigint() - started), outcome.error),
            (error: unknown) =>
              recordRequest(stats, Number(process.hrtime.bigint() - started), String(error)),
          );
        },
      });
    const subs = [endpoint.subject, ...(endpoint.alsoOn ?? [])].map(subscribe);
    this.#endpoints.push({ descriptor, stats, subs });
    return subs;
  }

  /** Unsubscribes the endpoints (requests already queued are still delivered), then the control subjects. */
  stop(): Promise<void> {
    this.#stopped ??= (async () => {
      if (this.#nc.isClosed()) return;
      await Promise.allSettled(this.#endpoints.flatMap((e) => e.subs.map((sub) => sub.drain())));
      await Promise.allSettled(this.#control.map((sub) => sub.drain()));
    })();
    return this.#stopped;
  }

  #answerControl(verb: Verb, err: Error | null, msg: Msg): void {
    if (err) {
      this.#logger.error({ err }, `$SRV.${verb} subscription failed`);
      return;
    }
    const endpoints = this.#endpoints.map((e) => e.descriptor);
    const body =
      verb === "PING"
        ? pingResponse(this.descriptor)
        : verb === "INFO"
          ? infoResponse(this.descriptor, endpoints)
          : statsResponse(
              this.descriptor,
              this.#endpoints.map(({ descriptor, stats }) => ({ endpoint: descriptor, stats })),
            );
    msg.respond(JSON.stringify(body));
  }
}

/**
 * The CLI's bus: a connection through @toolbus/bus, opened only after a quick probe shows NATS
 * answers (the bus runtime waits for NATS forever, which a CLI must not), typed requests whose
 * failures become `CliError`s (no responders means nothing serves the subject), and plain
 * subscriptions for events.
 */
import { connect, NoRespondersError, RequestError, TimeoutError } from "@nats-io/transport-node";
import {
  type Bus,
  connectBus,
  createLogger,
  heldCall,
  maskUrl,
  type NatsAccess,
  natsConnectionOptions,
  permissionViolation,
} from "@toolbus/bus";
import { createSubjects, type Subjects, TOOLBUS_VERSION, WireError } from "@toolbus/protocol";
import type { z } from "zod";
import { CliError } from "../core/failure.js";

export interface BusClient {
  readonly subjects: Subjects;
  /** Throws `CliError`: no_responders, timeout (with `timeoutHint`), request_failed. */
  request<S extends z.ZodType>(
    subject: string,
    body: unknown,
    resultSchema: S,
    options: { timeoutMs: number; timeoutHint?: string },
  ): Promise<z.output<S>>;
  /**
   * A request that may wait for a human (`dispatch.call`): sent held (`holdMs`) and sent again,
   * same body, until it is answered or `timeoutMs` ends (see `heldCall`). Throws as `request`.
   */
  requestHeld<S extends z.ZodType>(
    subject: string,
    body: { callId: string } & Record<string, unknown>,
    resultSchema: S,
    options: { timeoutMs: number; timeoutHint?: string },
  ): Promise<z.output<S>>;
  /**
   * Core NATS subscription; bodies that are not JSON arrive as their text. `onRefused` is told
   * when NATS refuses it (this identity may not subscribe there). Returns unsubscribe.
   */
  subscribe(
    subject: string,
    onMessage: (subject: string, body: unknown) => void,
    onRefused?: (reason: string) => void,
  ): () => void;
  /** Resolves once the server has every subscription made so far. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export interface OpenBusOptions {
  /** Servers and the CLI's identity (see `natsAccessFromEnv`). */
  access: NatsAccess;
  prefix: string;
  connectTimeoutMs: number;
  env: Readonly<Record<string, string | undefined>>;
}

export async function openBusClient(options: OpenBusOptions): Promise<BusClient> {
  const { access, connectTimeoutMs } = options;
  const natsUrl = access.servers.map(maskUrl).join(",");
  await probeNats(access, natsUrl, connectTimeoutMs);
  // Logs go to stderr and only when LOG_LEVEL asks for them: stdout belongs to the output.
  const logger = createLogger({
    service: "cli",
    version: TOOLBUS_VERSION,
    destination: process.stderr,
    ...(options.env.LOG_LEVEL ? {} : { level: "silent" as const }),
  });
  const connecting = connectBus({ access, service: { name: "cli", version: TOOLBUS_VERSION }, logger });
  const bus = await withTimeout(connecting, connectTimeoutMs, () => {
    // A bus that connects after we gave up must not keep the process alive.
    void connecting.then((late) => late.close()).catch(() => undefined);
    return new CliError({
      kind: "nats_unreachable",
      natsUrl,
      reason: `no connection within ${connectTimeoutMs} ms`,
    });
  });
  return new NatsBusClient(bus, createSubjects(options.prefix), natsUrl);
}

/** One connection attempt without retries: fails in milliseconds when nothing listens. */
async function probeNats(access: NatsAccess, natsUrl: string, timeoutMs: number): Promise<void> {
  try {
    const probe = await connect({
      ...natsConnectionOptions(access),
      timeout: timeoutMs,
      reconnect: false,
      name: "toolbus-cli-probe",
    });
    await probe.close();
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : undefined;
    const reason = error instanceof Error ? error.message : String(error);
    if (/authori[sz]ation violation|authentication/i.test(reason)) {
      throw new CliError({ kind: "nats_refused", natsUrl, credentials: access.credentialSource, reason });
    }
    throw new CliError({
      kind: "nats_unreachable",
      natsUrl,
      reason: maskUrl(cause ? `${reason}: ${cause}` : reason),
    });
  }
}

class NatsBusClient implements BusClient {
  readonly #bus: Bus;
  readonly subjects: Subjects;
  /** The NATS the CLI tried, named in its failures. */
  readonly #natsUrl: string;

  constructor(bus: Bus, subjects: Subjects, natsUrl: string) {
    this.#bus = bus;
    this.subjects = subjects;
    this.#natsUrl = natsUrl;
  }

  async request<S extends z.ZodType>(
    subject: string,
    body: unknown,
    resultSchema: S,
    options: { timeoutMs: number; timeoutHint?: string },
  ): Promise<z.output<S>> {
    try {
      return await this.#bus.request(subject, body, resultSchema, { timeoutMs: options.timeoutMs });
    } catch (error) {
      throw this.#failure(error, subject, options);
    }
  }

  async requestHeld<S extends z.ZodType>(
    subject: string,
    body: { callId: string } & Record<string, unknown>,
    resultSchema: S,
    options: { timeoutMs: number; timeoutHint?: string },
  ): Promise<z.output<S>> {
    try {
      return await heldCall(
        (holdMs, timeoutMs) => this.#bus.request(subject, { ...body, holdMs }, resultSchema, { timeoutMs }),
        { timeoutMs: options.timeoutMs, what: `call ${body.callId}` },
      );
    } catch (error) {
      if (error instanceof WireError && error.code === "timeout") {
        return Promise.reject(
          new CliError({
            kind: "timeout",
            subject,
            timeoutMs: options.timeoutMs,
            ...(options.timeoutHint ? { hint: options.timeoutHint } : {}),
          }),
        );
      }
      throw this.#failure(error, subject, options);
    }
  }

  #failure(error: unknown, subject: string, options: { timeoutMs: number; timeoutHint?: string }): CliError {
    const cause = error instanceof Error ? error.cause : undefined;
    if (cause instanceof NoRespondersError || (cause instanceof RequestError && cause.isNoResponders())) {
      return new CliError({
        kind: "no_responders",
        subject,
        prefix: this.subjects.prefix,
        natsUrl: this.#natsUrl,
      });
    }
    if (error instanceof WireError && error.code === "timeout" && isLocalTimeout(cause)) {
      return new CliError({
        kind: "timeout",
        subject,
        timeoutMs: options.timeoutMs,
        ...(options.timeoutHint ? { hint: options.timeoutHint } : {}),
      });
    }
    if (error instanceof WireError && error.code === "unauthorized") {
      return new CliError({
        kind: "not_permitted",
        message: error.message,
        prefix: this.subjects.prefix,
        natsUrl: this.#natsUrl,
      });
    }
    if (error instanceof WireError) {
      return new CliError({ kind: "request_failed", subject, code: error.code, message: error.message });
    }
    const message = error instanceof Error ? error.message : String(error);
    return new CliError({ kind: "request_failed", subject, code: "internal", message });
  }

  subscribe(
    subject: string,
    onMessage: (subject: string, body: unknown) => void,
    onRefused?: (reason: string) => void,
  ): () => void {
    const subscription = this.#bus.nc.subscribe(subject, {
      callback: (error, msg) => {
        if (error) {
          const refused = permissionViolation(error);
          if (refused) onRefused?.(refused.message);
          return;
        }
        const text = msg.string();
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // Not JSON: shown as text.
        }
        onMessage(msg.subject, body);
      },
    });
    return () => subscription.unsubscribe();
  }

  flush(): Promise<void> {
    return this.#bus.nc.flush();
  }

  async close(): Promise<void> {
    if (!this.#bus.nc.isClosed()) await this.#bus.nc.close();
  }
}

function isLocalTimeout(cause: unknown): boolean {
  return cause instanceof TimeoutError || (cause instanceof Error && cause.cause instanceof TimeoutError);
}

function withTimeout<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

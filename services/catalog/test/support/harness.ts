/**
 * What the catalog integration tests share: a fresh subject prefix on the real NATS, the
 * service started in-process (one bus per instance, so replicas balance like processes do),
 * every event on `<prefix>.events.>` recorded from before start-up, raw request/reply with
 * the envelope kept, the catalog bucket, and a cleanup that leaves nothing behind. The prefix's
 * JetStream assets are provisioned first, as `toolbus provision` does before any service runs.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import type { KV } from "@nats-io/kv";
import { Kvm } from "@nats-io/kv";
import { connect, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import { type Bus, connectBus, createLogger, type ProvisionSettings } from "@toolbus/bus";
import { parseToolbusToml, type ToolbusConfig } from "@toolbus/config";
import {
  type CatalogServerEntry,
  type CatalogSnapshot,
  createSubjects,
  type Subjects,
} from "@toolbus/protocol";
import { cleanupJetStream, isolation, provisionPrefix } from "@toolbus/testkit";
import { type CatalogService, startCatalogService } from "../../src/catalog-service.js";

export { eventually, toolbusToml } from "@toolbus/testkit";

export function natsUrl(): string {
  const url = process.env.NATS_URL;
  if (!url)
    throw new Error("NATS_URL is not set: run the tests through vitest (its global setup provides it)");
  return url;
}

export interface RecordedEvent {
  subject: string;
  body: Record<string, unknown>;
}

export type Envelope =
  | { ok: true; result: Record<string, unknown> }
  | { ok: false; error: { code: string; message: string; retryable: boolean } };

export interface StartOptions {
  servers?: readonly string[];
  /** The environment the service reads (bearer tokens, stdio allow-list); default process.env. */
  env?: Record<string, string | undefined>;
  /** The private state directory (stdio servers' own directories); default one of the harness's own. */
  stateDir?: string;
  /** Serve `catalog.*` too (default), or run connectors only (`--connectors-only`). */
  front?: boolean;
}

export interface RunningService {
  service: CatalogService;
  bus: Bus;
  /** Every line the service logged, parsed. */
  logs: Array<Record<string, unknown>>;
  /** Stops the service and closes its bus (idempotent). */
  stop(): Promise<void>;
}

export class CatalogHarness {
  readonly events: RecordedEvent[] = [];
  private readonly running: RunningService[] = [];
  private readonly subscriptions: Subscription[] = [];
  private readonly cleanups: Array<() => Promise<unknown>> = [];
  private ownStateDir: string | undefined;

  private constructor(
    readonly prefix: string,
    readonly subjects: Subjects,
    readonly nc: NatsConnection,
    readonly natsUrl: string,
  ) {}

  /**
   * A fresh prefix, with every event under it recorded from now on; on the suite's NATS, or on
   * `options.natsUrl` (a nats-server of the test's own, e.g. with another max_payload).
   */
  static async create(
    label: string,
    /** `provision`: the settings to provision with, or false for a prefix nobody provisioned. */
    options: { natsUrl?: string; provision?: Partial<ProvisionSettings> | false } = {},
  ): Promise<CatalogHarness> {
    const { prefix } = isolation(label);
    const url = options.natsUrl ?? natsUrl();
    if (options.provision !== false) await provisionPrefix(url, prefix, options.provision);
    const nc = await connect({ servers: url });
    const harness = new CatalogHarness(prefix, createSubjects(prefix), nc, url);
    const events = nc.subscribe(`${prefix}.events.>`, {
      callback: (error, msg) => {
        if (!error) harness.events.push({ subject: msg.subject, body: msg.json() });
      },
    });
    harness.subscriptions.push(events);
    await nc.flush();
    return harness;
  }

  /** Starts an instance of the catalog service on this prefix (its own bus, like a separate process). */
  async start(config: ToolbusConfig | string, options: StartOptions = {}): Promise<RunningService> {
    const logs: Array<Record<string, unknown>> = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString("utf8").split("\n")) if (line.trim()) logs.push(JSON.parse(line));
        done();
      },
    });
    const logger = createLogger({ service: "catalog", version: "test", level: "info", destination });
    const bus = await connectBus({
      natsUrl: this.natsUrl,
      service: { name: "catalog", version: "0.1.0" },
      logger,
    });
    // Each server's connector on a bus of its own, as on an authenticated bus with its own identity.
    const connectorBus = (server: string) =>
      connectBus({
        natsUrl: this.natsUrl,
        service: { name: `connector-${server}`, version: "0.1.0" },
        logger: logger.child({ server }),
      });
    const service = await startCatalogService({
      bus,
      connectorBus,
      subjects: this.subjects,
      config: typeof config === "string" ? parseToolbusToml(config, { path: "/test/toolbus.toml" }) : config,
      env: options.env ?? process.env,
      logger,
      stateDir: options.stateDir ?? this.stateDir(),
      ...(options.servers ? { servers: options.servers } : {}),
      ...(options.front === undefined ? {} : { front: options.front }),
    }).catch(async (error: unknown) => {
      await bus.close();
      throw error;
    });
    let stopped: Promise<void> | undefined;
    const running: RunningService = {
      service,
      bus,
      logs,
      stop: () => {
        stopped ??= (async () => {
          await service.stop();
          await bus.close();
        })();
        return stopped;
      },
    };
    this.running.push(running);
    return running;
  }

  /** A raw request; the reply envelope as it came. */
  async request(subject: string, body: unknown, timeoutMs = 10_000): Promise<Envelope> {
    const payload = typeof body === "string" ? body : JSON.stringify(body);
    const reply = await this.nc.request(subject, payload, { timeout: timeoutMs });
    return reply.json<Envelope>();
  }

  /** The result of an ok reply; fails the test with the error otherwise. */
  async ok<T = Record<string, unknown>>(subject: string, body: unknown, timeoutMs?: number): Promise<T> {
    const envelope = await this.request(subject, body, timeoutMs);
    if (!envelope.ok) {
      throw new Error(`${subject} answered ${envelope.error.code}: ${envelope.error.message}`);
    }
    return envelope.result as T;
  }

  catalog(exposure: "all" | "model" = "all"): Promise<CatalogSnapshot> {
    return this.ok<CatalogSnapshot>(this.subjects.catalogGet, { exposure });
  }

  async kv(): Promise<KV> {
    return new Kvm(this.nc).open(this.subjects.kv.catalog);
  }

  async entry(server: string): Promise<CatalogServerEntry | undefined> {
    const entry = await (await this.kv()).get(`server.${server}`);
    return entry && entry.operation === "PUT" ? entry.json<CatalogServerEntry>() : undefined;
  }

  /** The catalog revision: the last sequence of the bucket's stream. */
  async revision(): Promise<number> {
    const kv = await this.kv();
    const status = await kv.status();
    return status.streamInfo.state.last_seq;
  }

  /** Events on one subject, in arrival order. */
  eventsOn(subject: string): Array<Record<string, unknown>> {
    return this.events.filter((event) => event.subject === subject).map((event) => event.body);
  }

  /** Subscribes to a subject for the rest of the test file; messages are kept in order. */
  collect(subject: string): Array<Record<string, unknown>> {
    const messages: Array<Record<string, unknown>> = [];
    this.subscriptions.push(
      this.nc.subscribe(subject, {
        callback: (error, msg) => {
          if (!error) messages.push(msg.json());
        },
      }),
    );
    return messages;
  }

  /** The harness's private state directory, made on first use, removed when it closes. */
  stateDir(): string {
    if (this.ownStateDir === undefined) {
      const dir = mkdtempSync(join(tmpdir(), "toolbus-catalog-state-"));
      this.ownStateDir = dir;
      this.defer(async () => rmSync(dir, { recursive: true, force: true }));
    }
    return this.ownStateDir;
  }

  /** Runs `cleanup` when the harness closes (servers, temp folders). */
  defer(cleanup: () => Promise<unknown>): void {
    this.cleanups.push(cleanup);
  }

  async close(): Promise<void> {
    for (const running of this.running.splice(0)) await running.stop().catch(() => undefined);
    for (const cleanup of this.cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
    for (const subscription of this.subscriptions.splice(0)) subscription.unsubscribe();
    await this.nc.close();
    await cleanupJetStream(this.natsUrl, this.prefix);
  }
}

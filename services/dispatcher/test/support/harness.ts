/**
 * What the dispatcher's integration tests share: a fresh prefix on a real NATS, a toolbus.toml
 * in a temp folder naming the scriptable MCP test server (`scripted`) and server-everything
 * (`everything`), the catalog service as a child process, the dispatcher (in this process on a
 * bus of its own, or as a child process), every call event recorded from before the first call,
 * stand-ins for the approvals service (its published policy, its decide endpoint), and a cleanup
 * that leaves nothing behind. The prefix is provisioned from the same toolbus.toml before anything
 * starts, as `pnpm start` runs `toolbus provision` before its services.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { connect, type Msg, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import { type Bus, connectBus, createLogger } from "@toolbus/bus";
import { parseToolbusToml, provisionInputs } from "@toolbus/config";
import {
  type ApprovalDecideRequest,
  type ApprovalDecideResult,
  type CallBeginEvent,
  type CallEndEvent,
  type CatalogServerEntry,
  type CatalogSnapshot,
  createSubjects,
  type McpToolCallItem,
  type Subjects,
  type ToolCallReply,
  type ToolCallRequest,
  type ToolEntry,
} from "@toolbus/protocol";
import {
  approvalPolicyOf,
  cleanupJetStream,
  eventually,
  isolation,
  provisionPrefix,
  publishApprovalPolicy,
  type TomlValue,
  toolbusToml,
} from "@toolbus/testkit";
import {
  type StdioTestServer,
  serverEverythingCommand,
  startTestServer,
  type TestServerScript,
} from "@toolbus/testkit/mcp-test-server";
import { type DispatcherService, startDispatcherService } from "../../src/dispatcher-service.js";
import { type ServiceProcess, startServiceProcess } from "./processes.js";

export { eventually } from "@toolbus/testkit";

export type ApprovalMode = "auto" | "prompt" | "writes" | "approve";

export interface HarnessOptions {
  label: string;
  /** The MCP test server as server `scripted`; absent: no such server. */
  script?: TestServerScript;
  /** `default_tools_approval_mode` of `scripted`; default `approve`, so nobody is asked. */
  scriptedMode?: ApprovalMode;
  /** `[mcp_servers.scripted.tools.<t>] approval_mode`. */
  toolModes?: Record<string, ApprovalMode>;
  /** More `[mcp_servers.scripted]` keys, e.g. `tool_timeout_sec`. */
  scriptedSettings?: Record<string, TomlValue>;
  /** server-everything over stdio as server `everything`, in mode `approve`. */
  everything?: boolean;
  /** Default `NATS_URL`. */
  natsUrl?: string;
  /** Extra environment of the catalog process (e.g. an OTLP endpoint). */
  catalogEnv?: Record<string, string>;
  /** Runs the dispatcher as its own process (`src/main.ts`) instead of in the test process. */
  dispatcherProcess?: boolean;
  /** A hooks file (Claude Code's shape), named by `[approvals] hooks`. */
  hooks?: unknown;
  /** More toolbus.toml tables, e.g. `[bus]` limits. */
  tables?: string;
  /**
   * Publish the approval policy of this toolbus.toml as the approvals service would (default
   * true): the dispatcher then settles what the policy alone settles. false: only a real
   * approvals service publishes it.
   */
  standInPolicy?: boolean;
}

export type Envelope<T> =
  | { ok: true; result: T }
  | { ok: false; error: { code: string; message: string; retryable: boolean } };

export type CallInput = Omit<ToolCallRequest, "callId"> & { callId?: string };

export interface RecordedEvent {
  phase: "begin" | "end";
  body: CallBeginEvent | CallEndEvent;
  /** The W3C traceparent header the event carried. */
  traceparent: string | undefined;
}

export interface StoredEvent {
  seq: number;
  phase: "begin" | "end";
  body: CallBeginEvent | CallEndEvent;
}

export interface StandIn<Req> {
  /** Every request received, oldest first, with its traceparent header. */
  readonly requests: Array<{ request: Req; traceparent: string | undefined }>;
  stop(): void;
}

export type ApprovalsStandIn = StandIn<ApprovalDecideRequest>;

type InProcessDispatcher = {
  service: DispatcherService;
  bus: Bus;
  logs: Array<Record<string, unknown>>;
  /** Drains and stops it (once; again is a no-op). */
  stop(): Promise<void>;
};

export function natsUrl(): string {
  const url = process.env.NATS_URL;
  if (!url)
    throw new Error("NATS_URL is not set: run the tests through vitest (its global setup provides it)");
  return url;
}

export class DispatchHarness {
  readonly events: RecordedEvent[] = [];
  readonly subjects: Subjects;
  private readonly subscriptions: Subscription[] = [];
  private readonly cleanups: Array<() => Promise<unknown>> = [];
  private nextCallId = 0;
  catalogProcess!: ServiceProcess;
  dispatcher: InProcessDispatcher | undefined;
  dispatcherProcess: ServiceProcess | undefined;
  scripted: StdioTestServer | undefined;
  configPath = "";
  /** The parsed toolbus.toml of an in-process dispatcher. */
  private config: ReturnType<typeof parseToolbusToml> | undefined;

  private constructor(
    readonly prefix: string,
    readonly natsUrl: string,
    readonly nc: NatsConnection,
  ) {
    this.subjects = createSubjects(prefix);
  }

  static async start(options: HarnessOptions): Promise<DispatchHarness> {
    const url = options.natsUrl ?? natsUrl();
    const { prefix } = isolation(options.label);
    const nc = await connect({ servers: url });
    const harness = new DispatchHarness(prefix, url, nc);
    try {
      await harness.boot(options);
    } catch (error) {
      await harness.close();
      throw error;
    }
    return harness;
  }

  private async boot(options: HarnessOptions): Promise<void> {
    this.subscriptions.push(
      this.nc.subscribe(`${this.prefix}.events.call.>`, {
        callback: (error, msg) => {
          if (error) return;
          this.events.push({
            phase: msg.subject === this.subjects.callBegin ? "begin" : "end",
            body: msg.json(),
            traceparent: msg.headers?.get("traceparent") || undefined,
          });
        },
      }),
    );
    await this.nc.flush();

    const servers: Record<string, Record<string, TomlValue>> = {};
    if (options.script) {
      this.scripted = await startTestServer({ transport: "stdio", script: options.script });
      this.cleanups.push(() => this.scripted!.dispose());
      servers.scripted = {
        command: this.scripted.command,
        args: this.scripted.args,
        default_tools_approval_mode: options.scriptedMode ?? "approve",
        ...(options.toolModes
          ? {
              tools: Object.fromEntries(
                Object.entries(options.toolModes).map(([tool, mode]) => [tool, { approval_mode: mode }]),
              ),
            }
          : {}),
        ...options.scriptedSettings,
      };
    }
    if (options.everything) {
      const everything = serverEverythingCommand();
      servers.everything = {
        command: everything.command,
        args: everything.args,
        default_tools_approval_mode: "approve",
      };
    }
    const dir = mkdtempSync(join(tmpdir(), "toolbus-dispatcher-test-"));
    this.cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    this.configPath = join(dir, "toolbus.toml");
    let toml = toolbusToml({ servers });
    if (options.hooks !== undefined) {
      const hooksPath = join(dir, "hooks.json");
      writeFileSync(hooksPath, JSON.stringify(options.hooks));
      toml = `[approvals]\nhooks = ${JSON.stringify(hooksPath)}\n\n${toml}`;
    }
    if (options.tables !== undefined) toml = `${options.tables}\n\n${toml}`;
    writeFileSync(this.configPath, toml);
    // Sized by the config's [bus] and [memory] tables, as `toolbus provision --config` does.
    await provisionPrefix(
      this.natsUrl,
      this.prefix,
      provisionInputs(parseToolbusToml(toml, { path: this.configPath }), {}),
    );
    if (options.standInPolicy !== false) {
      await publishApprovalPolicy(this.nc, this.prefix, await approvalPolicyOf(this.configPath));
    }

    this.catalogProcess = await startServiceProcess({
      service: "catalog",
      prefix: this.prefix,
      natsUrl: this.natsUrl,
      configPath: this.configPath,
      readyMessage: "catalog ready",
      ...(options.catalogEnv ? { env: options.catalogEnv } : {}),
    });
    this.cleanups.push(() => this.catalogProcess.stop());

    if (options.dispatcherProcess) {
      this.dispatcherProcess = await startServiceProcess({
        service: "dispatcher",
        prefix: this.prefix,
        natsUrl: this.natsUrl,
        configPath: this.configPath,
        readyMessage: "dispatcher ready",
      });
      this.cleanups.push(() => this.dispatcherProcess!.stop());
    } else {
      this.config = parseToolbusToml(toml, { path: this.configPath });
      this.dispatcher = await this.startDispatcher(this.config);
    }
    for (const server of Object.keys(servers)) {
      await eventually(`server ${server} ready in the catalog`, async () =>
        (await this.entry(server))?.status === "ready" ? true : undefined,
      );
    }
  }

  /**
   * Another in-process dispatcher on the same prefix and config (a replica in the queue group,
   * with its own memory of callIds); `stop` drains it, and it is stopped on close otherwise.
   */
  async startReplica(): Promise<InProcessDispatcher> {
    if (!this.config) throw new Error("startReplica needs the harness's dispatcher in this process");
    return this.startDispatcher(this.config);
  }

  private async startDispatcher(config: ReturnType<typeof parseToolbusToml>): Promise<InProcessDispatcher> {
    const logs: Array<Record<string, unknown>> = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString("utf8").split("\n")) if (line.trim()) logs.push(JSON.parse(line));
        done();
      },
    });
    const logger = createLogger({ service: "dispatcher", version: "test", level: "info", destination });
    const bus = await connectBus({
      natsUrl: this.natsUrl,
      service: { name: "dispatcher", version: "0.1.0" },
      logger,
    });
    const service = await startDispatcherService({ bus, subjects: this.subjects, config, logger });
    let stopping: Promise<void> | undefined;
    const stop = () => {
      stopping ??= (async () => {
        await bus.drain({ graceMs: 5_000 });
        await service.stop();
        await bus.close();
      })();
      return stopping;
    };
    this.cleanups.push(stop);
    return { service, bus, logs, stop };
  }

  /** A fresh call id, unique within this harness. */
  callId(): string {
    this.nextCallId++;
    return `call-${this.nextCallId}`;
  }

  /** `dispatch.call` as a client sends it; the reply envelope as it came. */
  async call(input: CallInput, timeoutMs = 20_000): Promise<Envelope<ToolCallReply>> {
    const request = { ...input, callId: input.callId ?? this.callId() };
    const reply = await this.nc.request(this.subjects.dispatchCall, JSON.stringify(request), {
      timeout: timeoutMs,
    });
    return reply.json<Envelope<ToolCallReply>>();
  }

  /** The reply of a call that must succeed on the bus (its status may still be failed or skipped). */
  async ok(input: CallInput, timeoutMs?: number): Promise<ToolCallReply> {
    const envelope = await this.call(input, timeoutMs);
    if (!envelope.ok)
      throw new Error(`dispatch.call answered ${envelope.error.code}: ${envelope.error.message}`);
    return envelope.result;
  }

  /** The call events seen so far for one call, in arrival order. */
  eventsOf(callId: string): RecordedEvent[] {
    return this.events.filter((event) => event.body.callId === callId);
  }

  /** Waits until the call's end event arrived; returns all its events. */
  async endedEvents(callId: string): Promise<RecordedEvent[]> {
    return eventually(`the end event of ${callId}`, () => {
      const events = this.eventsOf(callId);
      return events.some((event) => event.phase === "end") ? events : undefined;
    });
  }

  /** The call events stored in the JetStream events stream, in stream order. */
  async storedCallEvents(): Promise<StoredEvent[]> {
    const jsm = await jetstreamManager(this.nc);
    const stream = this.subjects.streams.events.name;
    const { state } = await jsm.streams.info(stream);
    const stored: StoredEvent[] = [];
    for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq++) {
      const message = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
      if (!message) continue;
      if (message.subject !== this.subjects.callBegin && message.subject !== this.subjects.callEnd) continue;
      stored.push({
        seq,
        phase: message.subject === this.subjects.callBegin ? "begin" : "end",
        body: message.json(),
      });
    }
    return stored;
  }

  async catalog(): Promise<CatalogSnapshot> {
    const reply = await this.nc.request(this.subjects.catalogGet, JSON.stringify({ exposure: "all" }), {
      timeout: 10_000,
    });
    const envelope = reply.json<Envelope<CatalogSnapshot>>();
    if (!envelope.ok)
      throw new Error(`catalog.get answered ${envelope.error.code}: ${envelope.error.message}`);
    return envelope.result;
  }

  /** The catalog's entry for a flat name, as a model would have been shown it. */
  async tool(flatName: string): Promise<ToolEntry> {
    const tool = (await this.catalog()).tools.find((entry) => entry.flatName === flatName);
    if (!tool) throw new Error(`the catalog has no tool ${flatName}`);
    return tool;
  }

  async entry(server: string): Promise<CatalogServerEntry | undefined> {
    const kv = await new Kvm(this.nc).open(this.subjects.kv.catalog);
    const entry = await kv.get(`server.${server}`);
    return entry && entry.operation === "PUT" ? entry.json<CatalogServerEntry>() : undefined;
  }

  async history(threadId: string): Promise<Envelope<{ items: McpToolCallItem[] }>> {
    const reply = await this.nc.request(this.subjects.dispatchHistory, JSON.stringify({ threadId }), {
      timeout: 10_000,
    });
    return reply.json<Envelope<{ items: McpToolCallItem[] }>>();
  }

  /** A stand-in for the approvals service on `<prefix>.approvals.decide`. */
  approvals(
    answer: (
      request: ApprovalDecideRequest,
      msg: Msg,
    ) => Promise<ApprovalDecideResult> | ApprovalDecideResult,
  ): Promise<ApprovalsStandIn> {
    return this.standIn(this.subjects.approvalsDecide, async (request: ApprovalDecideRequest, msg) => ({
      ok: true,
      result: await answer(request, msg),
    }));
  }

  /** A service stand-in on `subject` (queue `approvals`): `answer` gives the whole reply envelope. */
  async standIn<Req>(
    subject: string,
    answer: (request: Req, msg: Msg) => Promise<Envelope<unknown>> | Envelope<unknown>,
  ): Promise<StandIn<Req>> {
    const requests: StandIn<Req>["requests"] = [];
    const subscription = this.nc.subscribe(subject, {
      queue: "approvals",
      callback: (error, msg) => {
        if (error) return;
        const request = msg.json<Req>();
        requests.push({ request, traceparent: msg.headers?.get("traceparent") || undefined });
        void (async () => msg.respond(JSON.stringify(await answer(request, msg))))();
      },
    });
    this.subscriptions.push(subscription);
    await this.nc.flush();
    return { requests, stop: () => subscription.unsubscribe() };
  }

  /** Every message on `subject` from now on, parsed, in arrival order. */
  async collect<T = Record<string, unknown>>(subject: string): Promise<T[]> {
    const messages: T[] = [];
    this.subscriptions.push(
      this.nc.subscribe(subject, {
        callback: (error, msg) => {
          if (!error) messages.push(msg.json<T>());
        },
      }),
    );
    await this.nc.flush();
    return messages;
  }

  /** Runs `cleanup` when the harness closes. */
  defer(cleanup: () => Promise<unknown>): void {
    this.cleanups.push(cleanup);
  }

  async close(): Promise<void> {
    for (const cleanup of this.cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
    for (const subscription of this.subscriptions.splice(0)) subscription.unsubscribe();
    if (!this.nc.isClosed()) await this.nc.close();
    await cleanupJetStream(this.natsUrl, this.prefix);
  }
}

/** The model's header for a wall time, as the reply reports it. */
export function wallTimeHeader(wallTimeMs: number): string {
  return `Wall time: ${(wallTimeMs / 1000).toFixed(4)} seconds\nOutput:`;
}

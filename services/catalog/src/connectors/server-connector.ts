/**
 * One configured MCP server as toolbus serves it: start-up under its timeout with status
 * events, listing into the catalog, re-listing on list_changed, restarts with backoff when
 * the connection dies, and the raw calls behind the revision barrier.
 */
import { cancelReason, maskUrl } from "@toolbus/bus";
import type { StdioIsolation } from "@toolbus/config";
import type { PolicySettings } from "@toolbus/policy";
import type { Tool } from "@toolbus/protocol";
import type { ReadPressure } from "../adapters/mcp/bounded-transports.js";
import type { ServerRequestRelay } from "../adapters/mcp/call-router.js";
import {
  type ConnectSpec,
  isAuthRequired,
  McpConnection,
  type McpConnectionEvents,
} from "../adapters/mcp/mcp-connection.js";
import { capabilityRefusal } from "../core/capability-refusal.js";
import type { ServerEntry, ServerState } from "../core/catalog-entry.js";
import { instanceKey, poolFullMessage } from "../core/instance-key.js";
import { errorChain, isOversized, isRequestTimeout, oversizedText } from "../core/mcp-errors.js";
import {
  formatDuration,
  type StartupFailureFacts,
  startupFailureDisplay,
  startupFailureReason,
  startupTimeoutError,
} from "../core/startup-messages.js";
import { acceptTools, isToolAllowed } from "../core/tool-filter.js";
import type { CallOutcome, OwnedServer, ServerCallRequest } from "../ports.js";
import { InstancePool, PoolFull } from "./instance-pool.js";

export interface ConnectorSettings {
  server: string;
  spec: ConnectSpec;
  required: boolean;
  startupTimeoutMs: number;
  toolTimeoutMs: number;
  supportsParallelToolCalls: boolean;
  enabledTools?: readonly string[];
  disabledTools?: readonly string[];
  /** `stdio`, or the URL origin for HTTP. */
  origin: string;
  maxTools: number;
  /** The most one message from the server may hold (`[bus] max_reply_bytes`, at least max_payload). */
  maxMessageBytes: number;
  /** When reading a large message from a stdio server should wait (the process's large-replies budget). */
  readPressure?: ReadPressure;
  /** The deployment's approval policy (TOOLBUS_APPROVAL_POLICY, TOOLBUS_PERMISSION_PROFILE), for server elicitations. */
  policy?: PolicySettings;
  /** A stdio server's calls run in one instance per principal or session (`isolation`). */
  isolation?: StdioIsolation;
}

export interface StatusUpdate {
  state: Exclude<ServerState, "disabled">;
  error?: string;
  reason?: "reauthentication_required";
}

export type StartupOutcome = { state: "ready" } | { state: "failed"; error: string } | { state: "cancelled" };

export interface ConnectorPorts {
  log: {
    info(o: object, m: string): void;
    warn(o: object, m: string): void;
    error(o: object, m: string): void;
  };
  publishStatus(server: string, status: StatusUpdate): void;
  /** Writes the change unless it changes nothing; returns the entry as stored afterwards. */
  writeEntry(server: string, change: EntryUpdate): Promise<ServerEntry>;
  relayFor(callId: string, threadId: string | undefined): ServerRequestRelay;
  /** A reconnection attempt after the connection was lost is starting. */
  restarting?(server: string): void;
  /** The server sent `prompts/list_changed` (prompts are listed live, so this is all there is to do). */
  promptsChanged(server: string): void;
}

export type EntryUpdate = Partial<
  Pick<
    ServerEntry,
    | "status"
    | "statusError"
    | "statusReason"
    | "tools"
    | "instructions"
    | "serverInfo"
    | "resourcesSupported"
    | "promptsSupported"
    | "completionsSupported"
  >
>;

/**
 * How long a call prepared against a revision this connector has not learnt yet waits for it.
 * The dispatcher only knows revisions that are in the bucket already, so the write is on its way
 * here (the ack of our own write, or the watch); under load it can arrive after the call.
 */
const REVISION_CATCH_UP_MS = 5_000;

/** Tools a listing warns about one by one before it only counts them. */
const MAX_TOOL_WARNINGS = 20;

/** Delays before each reconnection attempt; the last one repeats until the server is back. */
const BACKOFF_MS = [500, 1_000, 2_000, 5_000, 10_000, 30_000];

export class ServerConnector implements OwnedServer {
  private connection: McpConnection | undefined;
  private state: StatusUpdate["state"] = "starting";
  private revision = -1;
  private stopped = false;
  /** Aborted by stop(): a start-up in progress is cancelled rather than left to time out. */
  private readonly lifetime = new AbortController();
  private restartAttempt = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private listing: Promise<void> | undefined;
  private relistWanted = false;
  /** Calls waiting for the barrier to reach the revision they were prepared against. */
  private readonly revisionWaiters = new Set<() => void>();
  /** A server isolated per principal or session: how, and the instances that run its calls. */
  private readonly isolated:
    | { isolation: StdioIsolation; instances: InstancePool<McpConnection> }
    | undefined;

  constructor(
    readonly settings: ConnectorSettings,
    private readonly ports: ConnectorPorts,
  ) {
    const { isolation, server } = settings;
    if (isolation !== undefined) {
      const instances = new InstancePool<McpConnection>(
        isolation,
        (key) => this.openInstance(key),
        (key, why) =>
          this.ports.log.info(
            { server, instance: key },
            why === "idle"
              ? `stopped the instance of '${server}' for ${key}: no call for ${formatDuration(isolation.idleTimeoutMs)}`
              : `stopped the idle instance of '${server}' for ${key} to make room (max_instances ${isolation.maxInstances})`,
          ),
      );
      this.isolated = { isolation, instances };
    }
  }

  get status(): StatusUpdate["state"] {
    return this.state;
  }

  get currentRevision(): number {
    return this.revision;
  }

  /** Another replica's write to this server's entry, seen through the catalog watch. */
  observeEntry(entry: ServerEntry): void {
    this.setRevision(entry.revision);
  }

  /**
   * Starts the server; resolves once it is ready, failed or cancelled. Never rejects.
   * `failureNote` is appended to the display error (a restart says when it retries).
   */
  async start(failureNote?: (error: string) => string): Promise<StartupOutcome> {
    const { server, startupTimeoutMs } = this.settings;
    this.setStatus({ state: "starting" });
    await this.ports.writeEntry(server, { status: "starting" }).catch((e) => this.logWriteFailure(e));
    const timeout = AbortSignal.timeout(startupTimeoutMs);
    const signal = this.lifetime.signal;
    const abort = AbortSignal.any([signal, timeout]);
    // A list_changed that arrives before the first listing is stored (servers send one right
    // after initialize) may describe tools that listing missed: it is followed once ready.
    let changedWhileStarting = false;
    const connection = this.newConnection({
      toolsChanged: () => {
        if (this.connection === connection) void this.relist("tools/list_changed");
        else changedWhileStarting = true;
      },
      promptsChanged: () => {
        if (this.connection === connection) this.ports.promptsChanged(server);
      },
      closed: (error) => this.onClosed(connection, error),
    });
    try {
      const info = await raceAbort(
        (async () => {
          const serverInfo = await connection.connect(abort, startupTimeoutMs);
          const tools = await connection.listTools(startupTimeoutMs, this.settings.maxTools);
          return { serverInfo, tools };
        })(),
        abort,
      );
      if (this.stopped) throw new Error("the catalog service is stopping");
      this.connection = connection;
      this.restartAttempt = 0;
      const entry = await this.ports.writeEntry(server, {
        status: "ready",
        tools: this.acceptTools(info.tools),
        // What the server says about itself holds until it starts again, then is replaced (or cleared).
        instructions: info.serverInfo.instructions,
        serverInfo: info.serverInfo.serverInfo,
        resourcesSupported: info.serverInfo.capabilities.resources !== undefined,
        promptsSupported: info.serverInfo.capabilities.prompts !== undefined,
        completionsSupported: info.serverInfo.capabilities.completions !== undefined,
      });
      this.setRevision(entry.revision);
      this.setStatus({ state: "ready" });
      if (changedWhileStarting) void this.relist("tools/list_changed");
      return { state: "ready" };
    } catch (cause) {
      await connection.close();
      if (signal.aborted || this.stopped) {
        this.setStatus({ state: "cancelled" });
        await this.ports.writeEntry(server, { status: "cancelled" }).catch((e) => this.logWriteFailure(e));
        return { state: "cancelled" };
      }
      // Errors may quote the server's URL (fetch refuses one with credentials, naming it): masked.
      // The SDK's own request timeout (set to the start-up timeout) may fire first: the same timeout.
      const timedOut = timeout.aborted || isRequestTimeout(cause);
      const error = timedOut ? startupTimeoutError(startupTimeoutMs) : maskUrl(errorChain(cause));
      const { spec } = this.settings;
      const facts: StartupFailureFacts = {
        server,
        error,
        startupTimeoutMs,
        local: spec.transport === "stdio",
        authRequired: isAuthRequired(cause),
        ...(spec.transport !== "stdio"
          ? {
              url: spec.url,
              hasHeaders: Object.keys(spec.headers).length > 0,
              // toolbus keeps no OAuth store: credentials it sent and the server refused are the
              // stored login that needs renewing, so the reference's reauthentication reason.
              hasStoredOAuth: sendsCredentials(spec.headers),
            }
          : {}),
      };
      const display = startupFailureDisplay(facts);
      const reason = startupFailureReason(facts);
      const shown = failureNote ? failureNote(display) : display;
      this.setStatus({ state: "failed", error: shown, ...(reason ? { reason } : {}) });
      await this.ports
        .writeEntry(server, {
          status: "failed",
          statusError: shown,
          ...(reason ? { statusReason: reason } : {}),
        })
        .catch((e) => this.logWriteFailure(e));
      return { state: "failed", error };
    }
  }

  /** A server that cannot even be attempted (e.g. its bearer token variable is unset). */
  async fail(error: string): Promise<StartupOutcome> {
    const { server, startupTimeoutMs } = this.settings;
    this.setStatus({ state: "starting" });
    const display = startupFailureDisplay({ server, error, startupTimeoutMs });
    this.setStatus({ state: "failed", error: display });
    await this.ports
      .writeEntry(server, { status: "failed", statusError: display })
      .catch((e) => this.logWriteFailure(e));
    return { state: "failed", error };
  }

  /** Re-lists the tools; concurrent triggers coalesce into one more listing. */
  relist(reason: string): Promise<void> {
    if (this.listing) {
      this.relistWanted = true;
      return this.listing;
    }
    this.listing = (async () => {
      do {
        this.relistWanted = false;
        const connection = this.connection;
        if (!connection) return;
        try {
          const tools = await connection.listTools(this.settings.startupTimeoutMs, this.settings.maxTools);
          const entry = await this.ports.writeEntry(this.settings.server, { tools: this.acceptTools(tools) });
          this.setRevision(entry.revision);
          this.ports.log.info(
            { server: this.settings.server, reason, revision: entry.revision },
            "tools re-listed",
          );
        } catch (error) {
          this.ports.log.warn(
            { server: this.settings.server, reason, err: error },
            "re-listing tools failed",
          );
        }
      } while (this.relistWanted && !this.stopped);
    })().finally(() => {
      this.listing = undefined;
    });
    return this.listing;
  }

  /**
   * The raw `tools/call`, behind the barrier: a call prepared against another revision of this
   * server's tools is refused, and the server never sees it.
   */
  async call(request: ServerCallRequest): Promise<CallOutcome> {
    const { server } = this.settings;
    if (request.preparedRevision !== undefined && request.preparedRevision > this.revision) {
      await this.revisionReached(request.preparedRevision, request.signal);
    }
    if (request.preparedRevision !== undefined && request.preparedRevision !== this.revision) {
      return {
        kind: "stale",
        message: `tool call rejected because the catalog changed after \`${server}/${request.tool}\` was prepared`,
      };
    }
    const connection = this.connection;
    if (!connection || this.state !== "ready") {
      return { kind: "not_ready", message: `MCP server '${server}' is not connected` };
    }
    if (!isToolAllowed(this.settings, request.tool)) {
      return { kind: "disabled", message: `tool '${request.tool}' is disabled for MCP server '${server}'` };
    }
    if (request.arguments !== undefined && !isPlainObject(request.arguments)) {
      return {
        kind: "bad_arguments",
        message: `MCP tool arguments must be a JSON object, got ${JSON.stringify(request.arguments)}`,
      };
    }
    const timeoutMs = Math.min(this.settings.toolTimeoutMs, request.timeoutMs ?? Number.POSITIVE_INFINITY);
    const meta: Record<string, unknown> = { ...request.meta, callId: request.callId };
    // The thread id is always ours to set, overwriting whatever the caller put there.
    if (request.threadId !== undefined) meta.threadId = request.threadId;
    const callOn = (on: McpConnection) =>
      on.callTool(
        {
          name: request.tool,
          ...(request.arguments !== undefined
            ? { arguments: request.arguments as Record<string, unknown> }
            : {}),
          _meta: meta,
        },
        {
          timeoutMs,
          relay: this.ports.relayFor(request.callId, request.threadId),
          ...(request.clientCapabilities ? { clientCapabilities: request.clientCapabilities } : {}),
          ...(request.signal ? { signal: request.signal } : {}),
          ...(request.onProgress ? { onProgress: request.onProgress } : {}),
        },
      );
    const { isolated } = this;
    try {
      // Isolated: the call runs in its principal's or session's own instance.
      const result = isolated
        ? await isolated.instances.run(instanceKey(isolated.isolation.by, request), callOn)
        : await callOn(connection);
      return { kind: "ok", result };
    } catch (error) {
      if (error instanceof PoolFull && isolated) {
        return { kind: "not_ready", message: poolFullMessage(server, isolated.isolation) };
      }
      // The SDK rejects a cancelled request as a timeout: the signal says which it was.
      if (request.signal?.aborted) {
        return {
          kind: "cancelled",
          message: `tool call cancelled for \`${server}/${request.tool}\`: ${cancelReason(request.signal)}`,
        };
      }
      // The server's answer about this caller (it lacks a capability), not a failure.
      const refused = capabilityRefusal(error, server);
      if (refused) return { kind: "ok", result: refused };
      const context = `tool call failed for \`${server}/${request.tool}\``;
      if (isRequestTimeout(error)) {
        return {
          kind: "timeout",
          message: `${context}: timed out awaiting tools/call after ${formatDuration(timeoutMs)}`,
        };
      }
      if (isOversized(error)) return { kind: "too_large", message: `${context}: ${oversizedText(error)}` };
      return { kind: "failed", message: `${context}: ${maskUrl(errorChain(error))}` };
    }
  }

  /**
   * An MCP connection to this server with the logging every connection has; `events` are what
   * differ between the listing connection and an isolated instance (`instance`: its key).
   */
  private newConnection(
    events: Pick<McpConnectionEvents, "toolsChanged" | "promptsChanged" | "closed">,
    instance?: string,
  ): McpConnection {
    const { server } = this.settings;
    const who = instance === undefined ? { server } : { server, instance };
    return new McpConnection(
      this.settings.spec,
      {
        ...events,
        resourcesChanged: () => {},
        stderr: (output) =>
          output.kind === "line"
            ? this.ports.log.info({ ...who, stderr: output.text }, "MCP server stderr")
            : this.ports.log.warn(who, output.text),
        unrelated: ({ method, why }) =>
          this.ports.log.info({ ...who, method }, `refused the MCP server's ${method}: ${why}`),
        dropped: (info) =>
          this.ports.log.warn(
            { ...who, ...info, limit: this.settings.maxMessageBytes },
            "dropped an oversized message from the MCP server that answered none of our requests",
          ),
      },
      {
        maxMessageBytes: this.settings.maxMessageBytes,
        ...(this.settings.readPressure ? { pressure: this.settings.readPressure } : {}),
        ...(this.settings.policy ? { policy: this.settings.policy } : {}),
      },
    );
  }

  /** Starts and initializes the instance of `key` (isolated servers), within the start-up timeout. */
  private async openInstance(key: string): Promise<McpConnection> {
    const { startupTimeoutMs, server } = this.settings;
    const connection: McpConnection = this.newConnection(
      {
        // The listing connection follows the server's lists; an instance's calls use them.
        toolsChanged: () => {},
        promptsChanged: () => {},
        closed: () => this.isolated?.instances.forget(key, connection),
      },
      key,
    );
    const abort = AbortSignal.any([this.lifetime.signal, AbortSignal.timeout(startupTimeoutMs)]);
    try {
      await raceAbort(connection.connect(abort, startupTimeoutMs), abort);
    } catch (cause) {
      await connection.close();
      const why =
        isRequestTimeout(cause) || abort.aborted ? startupTimeoutError(startupTimeoutMs) : errorChain(cause);
      throw new Error(`the instance of MCP server '${server}' for ${key} did not start: ${why}`);
    }
    this.ports.log.info({ server, instance: key }, `started an instance of '${server}' for ${key}`);
    return connection;
  }

  get mcp(): McpConnection | undefined {
    return this.state === "ready" ? this.connection : undefined;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const wake of this.revisionWaiters) wake();
    this.lifetime.abort(new Error("the catalog service is stopping"));
    clearTimeout(this.restartTimer);
    await Promise.all([this.connection?.close(), this.isolated?.instances.stop()]);
    this.connection = undefined;
  }

  private setRevision(revision: number): void {
    this.revision = revision;
    for (const wake of this.revisionWaiters) wake();
  }

  /** Resolves once the barrier is at `revision` or past it, or after REVISION_CATCH_UP_MS, an abort or stop(). */
  private revisionReached(revision: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        this.revisionWaiters.delete(wake);
        resolve();
      };
      const wake = () => {
        if (this.revision >= revision || this.stopped || signal?.aborted) done();
      };
      const timer = setTimeout(done, REVISION_CATCH_UP_MS);
      signal?.addEventListener("abort", done);
      this.revisionWaiters.add(wake);
      wake();
    });
  }

  /** The listed tools the entry keeps (core/tool-filter.ts); malformed ones are logged. */
  private acceptTools(listed: unknown[]): Tool[] {
    const { server } = this.settings;
    const { accepted, rejected, unconvertible } = acceptTools(listed, this.settings);
    if (rejected.length > 0) {
      this.ports.log.warn(
        { server, rejected: rejected.slice(0, 20), count: rejected.length },
        "the server listed malformed tools; they are left out of the catalog",
      );
    }
    // One warning per tool, as the reference logs it; a flood is cut short with a count.
    for (const warning of unconvertible.slice(0, MAX_TOOL_WARNINGS)) this.ports.log.warn({ server }, warning);
    if (unconvertible.length > MAX_TOOL_WARNINGS) {
      this.ports.log.warn(
        { server, count: unconvertible.length },
        `${unconvertible.length - MAX_TOOL_WARNINGS} more tools of this server cannot be shown to a model`,
      );
    }
    return accepted;
  }

  private onClosed(connection: McpConnection, error?: Error): void {
    if (this.stopped || this.connection !== connection) return;
    this.connection = undefined;
    const delay = this.nextBackoff();
    const message = `MCP client for \`${this.settings.server}\` lost its connection: ${maskUrl(error?.message ?? "closed")}; reconnecting in ${formatDuration(delay)} (attempt ${this.restartAttempt})`;
    this.ports.log.warn({ server: this.settings.server, attempt: this.restartAttempt }, message);
    this.setStatus({ state: "failed", error: message });
    void this.ports
      .writeEntry(this.settings.server, { status: "failed", statusError: message })
      .catch((e) => this.logWriteFailure(e));
    this.scheduleRestart(delay);
  }

  /** Reconnects after `delay`; a failed attempt schedules the next one, further apart, until stop(). */
  private scheduleRestart(delay: number): void {
    this.restartTimer = setTimeout(async () => {
      if (this.stopped) return;
      this.ports.restarting?.(this.settings.server);
      const next = BACKOFF_MS[Math.min(this.restartAttempt, BACKOFF_MS.length - 1)]!;
      const outcome = await this.start(
        (display) => `${display}; retrying in ${formatDuration(next)} (attempt ${this.restartAttempt + 1})`,
      );
      if (outcome.state === "failed" && !this.stopped) this.scheduleRestart(this.nextBackoff());
    }, delay);
    this.restartTimer.unref();
  }

  private nextBackoff(): number {
    const delay = BACKOFF_MS[Math.min(this.restartAttempt, BACKOFF_MS.length - 1)]!;
    this.restartAttempt++;
    return delay;
  }

  private setStatus(status: StatusUpdate): void {
    this.state = status.state;
    this.ports.publishStatus(this.settings.server, status);
  }

  private logWriteFailure(error: unknown): void {
    this.ports.log.error({ server: this.settings.server, err: error }, "writing the catalog entry failed");
  }
}

function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** An `Authorization` header goes with every request: the server was sent a login. */
function sendsCredentials(headers: Readonly<Record<string, string>>): boolean {
  return Object.keys(headers).some((name) => name.toLowerCase() === "authorization");
}

/**
 * One MCP session: a low-level v2 SDK `Server` (bound to the 2025 revision its client's
 * `initialize` asks for) with the gateway's handlers, on the gateway's own
 * streamable HTTP transport (edge-transport.ts), plus the little state the client set (kept in
 * its record). A session another replica started is rebuilt by replaying the client's
 * initialize request and `notifications/initialized` into its server.
 * Its tool calls belong to a thread: the client's `_meta.threadId`, else the session itself.
 */
import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import {
  type BaseContext,
  type InitializeRequest,
  type JSONRPCErrorResponse,
  type MessageExtraInfo,
  ProtocolError,
  type RequestId,
  SdkError,
  SdkErrorCode,
  Server,
  type ServerContext,
  type ServerNotification,
  type ServerRequest,
  specTypeSchemas,
} from "@modelcontextprotocol/server";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/server/validators/ajv";
import type { Logger } from "@toolbus/bus";
import { ANONYMOUS } from "@toolbus/http-guard";
import { CallSamplingResultSchema, type LoggingLevel, type Principal } from "@toolbus/protocol";
import { clientTraceContext } from "../../call-trace.js";
import { JsonRpcCode } from "../../core/jsonrpc-errors.js";
import type { SessionRecord } from "../../core/session-record.js";
import {
  callThread,
  rememberThread,
  type ThreadClaim,
  threadClaimRefusal,
} from "../../core/session-threads.js";
import { SESSION_PROTOCOL_VERSIONS } from "../../core/streamable-http.js";
import { setLogLevel } from "../../handlers/logging.js";
import type { promptHandlers } from "../../handlers/prompts.js";
import type { resourceHandlers } from "../../handlers/resources.js";
import { callTool } from "../../handlers/tools-call.js";
import { listTools } from "../../handlers/tools-list.js";
import { type ClientChannel, type GatewayPorts, RequestFailure, type SessionStatePort } from "../../ports.js";
import {
  type EdgeMessageExtra,
  type EdgeRequest,
  EdgeTransport,
  jsonRpcMessage,
  requestPrincipal,
} from "./edge-transport.js";

export interface McpSessionDeps {
  ports: GatewayPorts;
  resources: ReturnType<typeof resourceHandlers>;
  prompts: ReturnType<typeof promptHandlers>;
  logger: Logger;
  serverInfo: { name: string; version: string };
  /** What a new session's `initialize` result tells the model, read when the session starts. */
  instructions(): Promise<string>;
  /** How long a client may take to answer an elicitation. */
  answerTimeoutMs: number;
  /** Put a call's approval to the calling client (`[gateway] elicit_approvals`). */
  elicitApprovals: boolean;
  /** Whether a caller may answer its own call's approval (`[approvals] self_approve`). */
  selfApprove: boolean;
  /** The session's record changed (created, or state the client set); store it. */
  onRecord(session: McpSession, record: SessionRecord): void;
  /** The client ended the session with DELETE; the DELETE is answered once this settles. */
  onEnded(session: McpSession): Promise<void>;
  /** Whether an MCP session has this id (a thread a client names must not be another's session). */
  isSession(id: string): Promise<boolean>;
  /** Binds a thread a client named to its principal, or says whose it is (core/session-threads.ts). */
  claimThread(threadId: string, principal: string): Promise<ThreadClaim>;
  /** The session closed (ended, expired or evicted). */
  onClosed(session: McpSession): void;
}

/** Subscriptions kept per session; more are refused rather than grown without bound. */
const MAX_SUBSCRIPTIONS = 1_000;
/** One validator for every session: building one per session costs more than the session itself. */
const sharedValidator = new AjvJsonSchemaValidator();

/** A request's context: the v2 SDK's, with the headers of the HTTP request it came in (`SessionServer`). */
type Ctx = ServerContext & { http?: { headers?: EdgeMessageExtra["headers"] } };

/**
 * The session's server: the v2 SDK's `Server`, whose request contexts also carry their request's
 * headers as the edge transport passed them (no web `Request` is built per message for them).
 */
class SessionServer extends Server {
  protected override buildContext(ctx: BaseContext, transportInfo?: MessageExtraInfo): ServerContext {
    const built: Ctx = super.buildContext(ctx, transportInfo);
    const headers = (transportInfo as Partial<EdgeMessageExtra> | undefined)?.headers;
    if (headers === undefined) return built;
    // `http` is the context's own (built above), so it takes the headers without another copy.
    if (built.http) built.http.headers = headers;
    else built.http = { headers };
    return built;
  }
}

/**
 * The v2 SDK sends a thrown -32002 (resource not found) as -32602 on every revision; the v1 SDK
 * sent the code thrown (an upstream server's, relayed). The session notes such a code by request
 * id and its transport puts it back on the error it sends.
 */
const V2_REWRITTEN_CODE = -32002;

/** Why a request's signal aborted (its reason, which a cancelled call passes on to its server). */
const CLIENT_LEFT = "the MCP client closed the connection before the call was answered";
const SESSION_CLOSED = "the MCP session closed";
function clientCancelled(reason: unknown): string {
  const given = typeof reason === "string" && reason.trim() !== "" ? `: ${reason.trim()}` : "";
  return `the MCP client sent notifications/cancelled${given}`;
}

export class McpSession implements SessionStatePort {
  readonly server: SessionServer;
  readonly transport: EdgeTransport;
  record: SessionRecord | undefined;
  /** Who started the session (a principal name): only they may use it, and they answer its approvals. */
  readonly principal: string;
  /** The view it serves (`/mcp/<view>`); undefined: the default view, `/mcp`. */
  readonly view: string | undefined;
  /** Milliseconds (monotonic) of the last request; idle sessions expire. */
  lastSeen = 0;
  /** Responses being written (an open SSE stream keeps a session alive). */
  openResponses = 0;
  /** Requests this replica sent the client (elicitations) that await an answer. */
  openAsks = 0;
  readonly #inflight = new Map<RequestId, AbortController>();
  readonly #subscriptions = new Set<string>();
  /** Codes thrown that the v2 SDK would send as another (see V2_REWRITTEN_CODE), by request id. */
  readonly #keptCodes = new Map<RequestId, number>();
  readonly #deps: McpSessionDeps;
  #closed = false;

  private constructor(
    deps: McpSessionDeps,
    principal: string,
    view: string | undefined,
    sessionId: () => string,
    init?: { params: InitializeRequest["params"]; instructions: string },
  ) {
    this.#deps = deps;
    this.principal = principal;
    this.view = view;
    this.server = new SessionServer(deps.serverInfo, {
      capabilities: {
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: false },
        prompts: { listChanged: true },
        completions: {},
        logging: {},
      },
      // A restored session replays initialize only to rebuild its state: nobody reads the answer.
      ...(init ? { instructions: init.instructions } : {}),
      jsonSchemaValidator: sharedValidator,
      // The revisions the edge lets a session's requests name (MCP-Protocol-Version).
      supportedProtocolVersions: [...SESSION_PROTOCOL_VERSIONS],
    });
    this.transport = new EdgeTransport({
      sessionIdGenerator: sessionId,
      onsessioninitialized: (id) => {
        if (!init) return;
        this.record = {
          sessionId: id,
          protocolVersion: init.params.protocolVersion,
          capabilities: init.params.capabilities as Record<string, unknown>,
          clientInfo: init.params.clientInfo,
          createdAt: new Date().toISOString(),
          principal,
          ...(view === undefined ? {} : { view }),
        };
        deps.onRecord(this, this.record);
      },
      onsessionclosed: () => deps.onEnded(this),
      errorAnswer: (message) => this.#withKeptCode(message),
    });
    this.transport.onclose = () => this.#markClosed();
    this.server.onerror = (error) => deps.logger.debug({ err: error }, "MCP session error");
    this.#registerHandlers();
  }

  /** A new session for a client's initialize request (answered by `handle`, which gives it its id). */
  static async create(
    deps: McpSessionDeps,
    init: InitializeRequest["params"],
    principal: string,
    view?: string,
  ): Promise<McpSession> {
    const session = new McpSession(deps, principal, view, () => randomUUID(), {
      params: init,
      instructions: await deps.instructions(),
    });
    await session.server.connect(session.transport);
    return session;
  }

  /** The session a record describes, rebuilt by replaying its initialize handshake into its server. */
  static async restore(deps: McpSessionDeps, record: SessionRecord): Promise<McpSession> {
    const session = new McpSession(
      deps,
      record.principal ?? ANONYMOUS.name,
      record.view,
      () => record.sessionId,
    );
    await session.server.connect(session.transport);
    session.transport.resume(record.sessionId);
    // Answered before the client's next request reaches the server: it sets the client's capabilities.
    await session.transport.replay({
      jsonrpc: "2.0",
      id: "toolbus-restore",
      method: "initialize",
      params: {
        protocolVersion: record.protocolVersion,
        capabilities: record.capabilities,
        clientInfo: record.clientInfo,
      },
    });
    session.transport.receive([{ jsonrpc: "2.0", method: "notifications/initialized" }]);
    session.record = record;
    return session;
  }

  get sessionId(): string | undefined {
    return this.transport.sessionId;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** One request to `/mcp` for this session, answered on `raw` (edge-transport.ts). */
  handle(request: EdgeRequest, raw: ServerResponse): Promise<void> {
    return this.transport.handle(request, raw);
  }

  /**
   * A client's answers that reached another replica, handed to this session's server. They
   * crossed the bus, so they are checked again here (answers only: nothing else is forwarded).
   */
  acceptForwarded(messages: unknown[]): void {
    if (!this.record) return;
    const answers = [];
    for (const message of messages) {
      const parsed = jsonRpcMessage(message);
      if (parsed === undefined || "method" in parsed) {
        throw new Error("a forwarded message is not a JSON-RPC answer; it was dropped with the rest");
      }
      answers.push(parsed);
    }
    this.transport.receive(answers);
  }

  /** The client went away before these requests were answered. */
  abortRequests(ids: readonly RequestId[]): void {
    for (const id of ids) this.#inflight.get(id)?.abort(CLIENT_LEFT);
  }

  notifyToolListChanged(): void {
    if (this.#closed) return;
    this.server.sendToolListChanged().catch((error: unknown) => {
      this.#deps.logger.debug({ err: error, sessionId: this.sessionId }, "could not send tools/list_changed");
    });
  }

  notifyPromptListChanged(): void {
    if (this.#closed) return;
    this.server.sendPromptListChanged().catch((error: unknown) => {
      this.#deps.logger.debug(
        { err: error, sessionId: this.sessionId },
        "could not send prompts/list_changed",
      );
    });
  }

  async close(): Promise<void> {
    for (const controller of this.#inflight.values()) controller.abort(SESSION_CLOSED);
    await this.server.close();
  }

  noteListed(revision: number): void {
    this.#update({ listedRevision: revision });
  }

  setLogLevel(level: LoggingLevel): void {
    this.#update({ logLevel: level });
  }

  subscribe(uri: string): void {
    if (this.#subscriptions.size >= MAX_SUBSCRIPTIONS && !this.#subscriptions.has(uri)) {
      throw new RequestFailure(
        JsonRpcCode.invalidRequest,
        `too many resource subscriptions in this session (at most ${MAX_SUBSCRIPTIONS}); unsubscribe from some first`,
      );
    }
    this.#subscriptions.add(uri);
  }

  unsubscribe(uri: string): void {
    this.#subscriptions.delete(uri);
  }

  #update(change: Partial<SessionRecord>): void {
    if (!this.record) return;
    const changed = Object.entries(change).some(
      ([key, value]) => this.record?.[key as keyof SessionRecord] !== value,
    );
    if (!changed) return;
    this.record = { ...this.record, ...change };
    this.#deps.onRecord(this, this.record);
  }

  #markClosed(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#keptCodes.clear();
    this.#deps.onClosed(this);
  }

  #registerHandlers(): void {
    const { server } = this;
    const deps = this.#deps;
    server.setRequestHandler("tools/list", (_request, ctx) =>
      this.#run(ctx, () => listTools(this, deps.ports) as Promise<never>),
    );
    server.setRequestHandler("tools/call", (request, ctx) =>
      this.#tracked(
        ctx,
        async (signal) =>
          callTool(
            { name: request.params.name, arguments: request.params.arguments },
            this.#channel(ctx, signal, await this.#threadOf(request.params._meta)),
            {
              ports: deps.ports,
              logger: deps.logger,
              answerTimeoutMs: deps.answerTimeoutMs,
              elicitApprovals: deps.elicitApprovals,
              selfApprove: deps.selfApprove,
            },
          ) as Promise<never>,
      ),
    );
    server.setRequestHandler("resources/list", (_request, ctx) =>
      this.#run(ctx, () => deps.resources.list() as Promise<never>),
    );
    server.setRequestHandler("resources/templates/list", (_request, ctx) =>
      this.#run(ctx, () => deps.resources.templates() as Promise<never>),
    );
    server.setRequestHandler("resources/read", (request, ctx) =>
      this.#run(ctx, () => deps.resources.read(request.params.uri) as Promise<never>),
    );
    server.setRequestHandler("resources/subscribe", (request, ctx) =>
      this.#run(ctx, async () => deps.resources.subscribe(request.params.uri, this) as never),
    );
    server.setRequestHandler("resources/unsubscribe", (request, ctx) =>
      this.#run(ctx, async () => deps.resources.unsubscribe(request.params.uri, this) as never),
    );
    // The results are the servers' own (loose) objects, passed through as MCP results.
    server.setRequestHandler("prompts/list", (_request, ctx) =>
      this.#run(ctx, () => deps.prompts.list() as Promise<never>),
    );
    server.setRequestHandler("prompts/get", (request, ctx) =>
      this.#run(ctx, () => deps.prompts.get(request.params.name, request.params.arguments) as Promise<never>),
    );
    server.setRequestHandler("completion/complete", (request, ctx) =>
      this.#run(
        ctx,
        () =>
          deps.prompts.complete({
            ref:
              request.params.ref.type === "ref/prompt"
                ? { type: "ref/prompt", name: request.params.ref.name }
                : { type: "ref/resource", uri: request.params.ref.uri },
            argument: request.params.argument,
            context: request.params.context,
          }) as Promise<never>,
      ),
    );
    server.setRequestHandler("logging/setLevel", (request, ctx) =>
      this.#run(ctx, async () => setLogLevel(request.params.level, this) as never),
    );
  }

  /**
   * The call's thread. A thread the client names must be its principal's (no other principal may
   * use its grants) and not another MCP session's id (naming one would let this client use that
   * session's grants); named for the first time, it is remembered in the record (so its grants
   * end with the session).
   */
  async #threadOf(meta: unknown): Promise<string> {
    // A tools/call comes on an initialized session, which has its id.
    const thread = callThread(meta, this.sessionId ?? "");
    if (!thread.ok) throw new RequestFailure(JsonRpcCode.invalidParams, thread.message);
    if (!thread.named) return thread.threadId;
    const known = this.record?.threads ?? [];
    const isNew = !known.includes(thread.threadId);
    await claimNamedThread(
      thread.threadId,
      this.principal,
      isNew,
      this.#deps,
      "to use this session as the thread",
    );
    if (!isNew) return thread.threadId;
    const remembered = rememberThread(known, thread.threadId);
    this.#update({ threads: remembered.threads });
    if (remembered.released.length > 0) void this.#deps.ports.approvals.forgetThreads(remembered.released);
    return thread.threadId;
  }

  #channel(ctx: Ctx, signal: AbortSignal, threadId: string): ClientChannel {
    const record = this.record;
    const meta = ctx.mcpReq._meta;
    const progressToken = meta?.progressToken;
    return {
      threadId,
      capabilities: (this.server.getClientCapabilities() ?? record?.capabilities ?? {}) as Record<
        string,
        unknown
      >,
      logLevel: record?.logLevel,
      listedRevision: record?.listedRevision,
      signal,
      principal: this.principal,
      ...optionalCaller(requestPrincipal(ctx.http?.authInfo)),
      progressToken,
      traceContext: clientTraceContext({ meta, headers: ctx.http?.headers }),
      notify: (notification) =>
        ctx.mcpReq.notify(notification as ServerNotification).catch((error: unknown) => {
          this.#deps.logger.debug({ err: error }, "could not relay a notification to the client");
        }),
      elicit: async (params, options) => {
        const asking = this.#asking(options.signal);
        try {
          return await ctx.mcpReq.send(
            { method: "elicitation/create", params } as ServerRequest,
            specTypeSchemas.ElicitResult,
            { timeout: options.timeoutMs, signal: asking.signal },
          );
        } catch (error) {
          throw v1Failure(error, asking.signal);
        } finally {
          asking.done();
        }
      },
      createMessage: async (params, options) => {
        const asking = this.#asking(options.signal);
        try {
          return await ctx.mcpReq.send(
            { method: "sampling/createMessage", params } as ServerRequest,
            CallSamplingResultSchema,
            { timeout: options.timeoutMs, signal: asking.signal },
          );
        } catch (error) {
          throw v1Failure(error, asking.signal);
        } finally {
          asking.done();
        }
      },
    };
  }

  /**
   * A request to the client (an elicitation, a sampling request) while it is open: counted in
   * `openAsks`, and cancelled by `signal` only until `done`. The SDK keeps listening to a
   * request's signal after its answer came, and would tell the client (`notifications/cancelled`)
   * that a request it had already answered was cancelled.
   */
  #asking(signal: AbortSignal | undefined): { signal: AbortSignal; done(): void } {
    const open = new AbortController();
    const cancel = () => open.abort(signal?.reason);
    if (signal?.aborted) cancel();
    else signal?.addEventListener("abort", cancel, { once: true });
    this.openAsks += 1;
    return {
      signal: open.signal,
      done: () => {
        this.openAsks -= 1;
        signal?.removeEventListener("abort", cancel);
      },
    };
  }

  /** Runs a request the client may cancel or abandon, with its own abort signal. */
  async #tracked<T>(ctx: Ctx, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const { id, signal: sdkSignal } = ctx.mcpReq;
    // One controller that also follows the SDK's signal: AbortSignal.any costs more than the call's own work here.
    const controller = new AbortController();
    // The SDK aborts its signal for the client's notifications/cancelled, and when the session closes.
    const follow = () => controller.abort(this.#closed ? SESSION_CLOSED : clientCancelled(sdkSignal.reason));
    if (sdkSignal.aborted) follow();
    else sdkSignal.addEventListener("abort", follow, { once: true });
    this.#inflight.set(id, controller);
    try {
      return await this.#run(ctx, () => run(controller.signal));
    } finally {
      this.#inflight.delete(id);
      sdkSignal.removeEventListener("abort", follow);
    }
  }

  async #run<T>(ctx: Ctx, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      // The SDK answers with the error's own `code` and `message` (RequestFailure carries both).
      if (!(error instanceof RequestFailure || error instanceof ProtocolError)) {
        this.#deps.logger.error({ err: error }, "an MCP request failed");
      }
      if ((error as { code?: unknown } | null)?.code === V2_REWRITTEN_CODE) {
        this.#keptCodes.set(ctx.mcpReq.id, V2_REWRITTEN_CODE);
      }
      throw error;
    }
  }

  /** An error answer with the code its handler threw, where the v2 SDK changed it. */
  #withKeptCode(message: JSONRPCErrorResponse & { id: RequestId }): JSONRPCErrorResponse & { id: RequestId } {
    const code = this.#keptCodes.get(message.id);
    if (code === undefined) return message;
    this.#keptCodes.delete(message.id);
    return { ...message, error: { ...message.error, code } };
  }
}

/**
 * A thread a client named, for `principal`: refused (a `RequestFailure`) when it is another MCP
 * session's id (`checkSession`: named for the first time) or another principal's thread.
 * `leaveOut` says what leaving `_meta.threadId` out does, for the refusal.
 */
export async function claimNamedThread(
  threadId: string,
  principal: string,
  checkSession: boolean,
  deps: Pick<McpSessionDeps, "isSession" | "claimThread">,
  leaveOut: string,
): Promise<void> {
  if (checkSession && (await deps.isSession(threadId))) {
    throw new RequestFailure(
      JsonRpcCode.invalidParams,
      `Invalid params: _meta.threadId names another MCP session; name a thread of your own, or leave it out ${leaveOut}`,
    );
  }
  const refusal = threadClaimRefusal(await deps.claimThread(threadId, principal), "_meta.threadId");
  if (refusal) {
    throw refusal.retryable
      ? new RequestFailure(JsonRpcCode.internalError, refusal.message)
      : new RequestFailure(JsonRpcCode.invalidParams, `Invalid params: ${refusal.message}`);
  }
}

/**
 * A request to the client that failed, as the v1 SDK failed it (the relays read its `code`, and
 * pass its message on): cancelled, the signal's own reason; timed out, -32001; the session closed
 * first, -32000; the client's error, its code. Messages read `MCP error <code>: <message>`.
 * (v2 rejects a cancelled request with a timeout, and names its own failures with string codes.)
 */
function v1Failure(error: unknown, signal: AbortSignal): unknown {
  if (signal.aborted) return signal.reason;
  if (error instanceof SdkError) {
    if (error.code === SdkErrorCode.RequestTimeout) return v1Error(JsonRpcCode.requestTimeout, error);
    if (error.code === SdkErrorCode.ConnectionClosed) return v1Error(JsonRpcCode.serverError, error);
    return error;
  }
  return error instanceof ProtocolError ? v1Error(error.code, error) : error;
}

function v1Error(code: number, error: ProtocolError | SdkError): ProtocolError {
  return new ProtocolError(code, `MCP error ${code}: ${error.message}`, error.data);
}

function optionalCaller(caller: Principal | undefined): { caller?: Principal } {
  return caller ? { caller } : {};
}

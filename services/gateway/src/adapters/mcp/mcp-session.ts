/**
 * One MCP session: a low-level SDK `Server` with the gateway's handlers, on the gateway's own
 * streamable HTTP transport (edge-transport.ts), plus the little state the client set (kept in
 * its record). A session another replica started is rebuilt by replaying the client's
 * initialize request and `notifications/initialized` into its server.
 * Its tool calls belong to a thread: the client's `_meta.threadId`, else the session itself.
 */
import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  ElicitResultSchema,
  GetPromptRequestSchema,
  type InitializeRequest,
  JSONRPCMessageSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type RequestId,
  type ServerNotification,
  type ServerRequest,
  type ServerResult,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
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
import { setLogLevel } from "../../handlers/logging.js";
import type { promptHandlers } from "../../handlers/prompts.js";
import type { resourceHandlers } from "../../handlers/resources.js";
import { callTool } from "../../handlers/tools-call.js";
import { listTools } from "../../handlers/tools-list.js";
import { type ClientChannel, type GatewayPorts, RequestFailure, type SessionStatePort } from "../../ports.js";
import { type EdgeRequest, EdgeTransport, requestPrincipal } from "./edge-transport.js";

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

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** Why a request's signal aborted (its reason, which a cancelled call passes on to its server). */
const CLIENT_LEFT = "the MCP client closed the connection before the call was answered";
const SESSION_CLOSED = "the MCP session closed";
function clientCancelled(reason: unknown): string {
  const given = typeof reason === "string" && reason.trim() !== "" ? `: ${reason.trim()}` : "";
  return `the MCP client sent notifications/cancelled${given}`;
}

export class McpSession implements SessionStatePort {
  readonly server: Server;
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
    this.server = new Server(deps.serverInfo, {
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
      const parsed = JSONRPCMessageSchema.safeParse(message);
      if (!parsed.success || "method" in parsed.data) {
        throw new Error("a forwarded message is not a JSON-RPC answer; it was dropped with the rest");
      }
      answers.push(parsed.data);
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
    this.#deps.onClosed(this);
  }

  #registerHandlers(): void {
    const { server } = this;
    const deps = this.#deps;
    server.setRequestHandler(ListToolsRequestSchema, () => this.#run(() => listTools(this, deps.ports)));
    server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
      this.#tracked(extra, async (signal) =>
        callTool(
          { name: request.params.name, arguments: request.params.arguments },
          this.#channel(extra, signal, await this.#threadOf(request.params._meta)),
          {
            ports: deps.ports,
            logger: deps.logger,
            answerTimeoutMs: deps.answerTimeoutMs,
            elicitApprovals: deps.elicitApprovals,
            selfApprove: deps.selfApprove,
          },
        ),
      ),
    );
    server.setRequestHandler(ListResourcesRequestSchema, () => this.#run(() => deps.resources.list()));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, () =>
      this.#run(() => deps.resources.templates()),
    );
    server.setRequestHandler(ReadResourceRequestSchema, (request) =>
      this.#run(() => deps.resources.read(request.params.uri)),
    );
    server.setRequestHandler(SubscribeRequestSchema, (request) =>
      this.#run(async () => deps.resources.subscribe(request.params.uri, this)),
    );
    server.setRequestHandler(UnsubscribeRequestSchema, (request) =>
      this.#run(async () => deps.resources.unsubscribe(request.params.uri, this)),
    );
    // The results are the servers' own (loose) objects, passed through as MCP results.
    server.setRequestHandler(
      ListPromptsRequestSchema,
      () => this.#run(() => deps.prompts.list()) as Promise<ServerResult>,
    );
    server.setRequestHandler(
      GetPromptRequestSchema,
      (request) =>
        this.#run(() =>
          deps.prompts.get(request.params.name, request.params.arguments),
        ) as Promise<ServerResult>,
    );
    server.setRequestHandler(
      CompleteRequestSchema,
      (request) =>
        this.#run(() =>
          deps.prompts.complete({
            ref:
              request.params.ref.type === "ref/prompt"
                ? { type: "ref/prompt", name: request.params.ref.name }
                : { type: "ref/resource", uri: request.params.ref.uri },
            argument: request.params.argument,
            context: request.params.context,
          }),
        ) as Promise<ServerResult>,
    );
    server.setRequestHandler(SetLevelRequestSchema, (request) =>
      this.#run(async () => setLogLevel(request.params.level, this)),
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

  #channel(extra: Extra, signal: AbortSignal, threadId: string): ClientChannel {
    const record = this.record;
    const progressToken = extra._meta?.progressToken;
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
      ...optionalCaller(requestPrincipal(extra.authInfo)),
      progressToken,
      traceContext: clientTraceContext({ meta: extra._meta, headers: extra.requestInfo?.headers }),
      notify: (notification) =>
        extra.sendNotification(notification as ServerNotification).catch((error: unknown) => {
          this.#deps.logger.debug({ err: error }, "could not relay a notification to the client");
        }),
      elicit: async (params, options) => {
        const asking = this.#asking(options.signal);
        try {
          return await extra.sendRequest(
            { method: "elicitation/create", params } as ServerRequest,
            ElicitResultSchema,
            { timeout: options.timeoutMs, signal: asking.signal },
          );
        } finally {
          asking.done();
        }
      },
      createMessage: async (params, options) => {
        const asking = this.#asking(options.signal);
        try {
          return await extra.sendRequest(
            { method: "sampling/createMessage", params } as ServerRequest,
            CallSamplingResultSchema,
            { timeout: options.timeoutMs, signal: asking.signal },
          );
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
  async #tracked<T>(extra: Extra, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    // One controller that also follows the SDK's signal: AbortSignal.any costs more than the call's own work here.
    const controller = new AbortController();
    // The SDK aborts its signal for the client's notifications/cancelled, and when the session closes.
    const follow = () =>
      controller.abort(this.#closed ? SESSION_CLOSED : clientCancelled(extra.signal.reason));
    if (extra.signal.aborted) follow();
    else extra.signal.addEventListener("abort", follow, { once: true });
    this.#inflight.set(extra.requestId, controller);
    try {
      return await this.#run(() => run(controller.signal));
    } finally {
      this.#inflight.delete(extra.requestId);
      extra.signal.removeEventListener("abort", follow);
    }
  }

  async #run<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      // The SDK answers with the error's own `code` and `message` (RequestFailure carries both).
      if (!(error instanceof RequestFailure || error instanceof McpError)) {
        this.#deps.logger.error({ err: error }, "an MCP request failed");
      }
      throw error;
    }
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

function optionalCaller(caller: Principal | undefined): { caller?: Principal } {
  return caller ? { caller } : {};
}

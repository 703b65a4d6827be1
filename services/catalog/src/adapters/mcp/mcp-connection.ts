/**
 * One MCP client's lifecycle: connect over stdio, streamable HTTP or legacy SSE, initialize
 * with toolbus's capabilities, list, call, and relay what the server sends during a call to that
 * call's relay (core/call-association.ts decides which call it belongs to). A streamable HTTP
 * server that refuses the 2025 `initialize` because it speaks MCP 2026-07-28 alone is reached
 * over that revision instead (modern-upstream.ts).
 * Both eras go through the v2 SDK client (`@modelcontextprotocol/client`): here in its default
 * `legacy` negotiation mode, the plain 2025 `initialize` sequence, over toolbus's own bounded
 * transports (bounded-transports.ts); its errors keep the words they had (legacy-words.ts).
 * It knows nothing of NATS: the connector owns routing, revisions and restarts.
 */
import {
  Client,
  type CreateMessageResult,
  type JSONRPCMessage,
  LATEST_PROTOCOL_VERSION,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  type Transport,
} from "@modelcontextprotocol/client";
import type { PolicySettings } from "@toolbus/policy";
import { type McpServerInfo, McpServerInfoSchema, TOOLBUS_VERSION } from "@toolbus/protocol";
import { z } from "zod";
import { capabilitiesForServer } from "../../core/caller-capabilities.js";
import { autoAnswer } from "../../core/elicitation-rules.js";
import { initializeRefusalMessage, jsonRpcRefusalIn } from "../../core/initialize-refusal.js";
import { oversizedFor } from "../../core/mcp-errors.js";
import { McpParamMirror } from "../../core/mcp-param-headers.js";
import { type Page, paginate } from "../../core/pagination.js";
import { StderrLimiter, type StderrOutput } from "../../core/stderr-limit.js";
import { StderrTail, withStderrReason } from "../../core/stderr-reason.js";
import type { McpSession, PagedMethod } from "../../ports.js";
import {
  BoundedStdioClientTransport,
  boundedFetch,
  type MessageCap,
  type ReadPressure,
  type StdioLaunch,
} from "./bounded-transports.js";
import { CallRouter, type ServerRequestRelay } from "./call-router.js";
import { inLegacyWords } from "./legacy-words.js";
import { callModern, connectModern, MODERN_PROTOCOL, speaksModern } from "./modern-upstream.js";

/** What this connection asks of the SDK client, on either era, once connected. */
interface PeerClient {
  request(
    request: { method: string; params?: Record<string, unknown> },
    resultSchema: z.ZodType,
    /** `allowInputRequired`: a 2026-07-28 server's `input_required` is the result, not an error. */
    options?: { timeout?: number; signal?: AbortSignal; allowInputRequired?: boolean },
  ): Promise<Record<string, unknown>>;
  getServerVersion(): unknown;
  getInstructions(): string | undefined;
  getServerCapabilities(): unknown;
}

type ModernClient = Awaited<ReturnType<typeof connectModern>>;

export type ConnectSpec =
  | ({ transport: "stdio" } & StdioLaunch)
  | { transport: "streamable_http"; url: string; headers: Record<string, string> }
  | { transport: "sse"; url: string; headers: Record<string, string> };

export interface McpConnectionEvents {
  toolsChanged(): void;
  resourcesChanged(): void;
  promptsChanged(): void;
  /** The connection is gone: the stdio child exited, or an HTTP server stopped answering. */
  closed(error?: Error): void;
  /** A stdio server's stderr, line by line within core/stderr-limit.ts's caps, or a note of what was dropped. */
  stderr?(output: StderrOutput): void;
  /** The server sent a message over the size cap that answered none of our requests. */
  dropped?(info: { size: number; head: string }): void;
  /** An elicitation or sampling request belonged to no call in flight and was refused. */
  unrelated?(info: { method: string; why: string }): void;
}

export interface McpConnectionOptions {
  /** The most one message from the server may hold (`[bus] max_reply_bytes`, at least max_payload). */
  maxMessageBytes: number;
  /** When reading a large message from a stdio server should wait. */
  pressure?: ReadPressure;
  /** The deployment's approval policy, which answers some server elicitations itself. */
  policy?: PolicySettings;
}

export const CLIENT_INFO = { name: "toolbus", title: "toolbus", version: TOOLBUS_VERSION } as const;
/**
 * Elicitation and sampling are relayed to the client that made the call they belong to
 * (toolbus has no person or model of its own), so toolbus offers every server the union of what
 * its callers may support: form and URL elicitation, sampling with tools. The caller answers what
 * it cannot do (a URL-mode elicitation is declined, sampling with tools refused, saying why): one
 * connection serves many callers, so it cannot declare one caller's capabilities. Roots are
 * declared and answered empty rather than relayed: no one client's roots are the server's, and
 * servers ask for roots at start-up or on their own, outside any call.
 */
export const CLIENT_CAPABILITIES = {
  elicitation: { form: {}, url: {} },
  sampling: { tools: {} },
  roots: { listChanged: false },
} as const;
/** Reference rule: under this protocol version `tools/list` reads the first page only. */
const LEGACY_PROTOCOL = "2025-06-18";
/** How long an HTTP server has to answer the ping that checks it is still there. */
const LIVENESS_TIMEOUT_MS = 5_000;

const LIST_KEY: Record<PagedMethod, string> = {
  "resources/list": "resources",
  "resources/templates/list": "resourceTemplates",
  "prompts/list": "prompts",
};

const LooseListResult = (key: string) =>
  z.looseObject({ [key]: z.array(z.unknown()), nextCursor: z.string().optional() });
const LooseResult = z.looseObject({});

export interface ServerInfo {
  instructions?: string;
  protocolVersion?: string;
  capabilities: Record<string, unknown>;
  /** The server's `serverInfo` (name, title, version, description, icons, website), when well-formed. */
  serverInfo?: McpServerInfo;
}

export class McpConnection implements McpSession {
  private client: Client | undefined;
  /** Set instead of `client` for a server of MCP 2026-07-28 alone. */
  private modern: ModernClient | undefined;
  private transport: Transport | undefined;
  private negotiatedProtocol: string | undefined;
  private closing = false;
  private checkingLiveness = false;
  private readonly cap: MessageCap;
  private readonly router: CallRouter;
  private readonly policy: Partial<PolicySettings>;
  /** A 2026-07-28 server's x-mcp-header annotations, from its last listing. */
  private readonly mcpParams = new McpParamMirror();

  constructor(
    private readonly spec: ConnectSpec,
    private readonly events: McpConnectionEvents,
    options: McpConnectionOptions,
  ) {
    this.cap = {
      maxMessageBytes: options.maxMessageBytes,
      dropped: (info) => this.events.dropped?.(info),
      ...(options.pressure ? { pressure: options.pressure } : {}),
    };
    this.router = new CallRouter((info) => this.events.unrelated?.(info));
    this.policy = options.policy ?? {};
  }

  /**
   * Connects and initializes within `timeoutMs` (the start-up timeout: without it the SDK's own
   * 60 s default would cap `initialize` whatever `startup_timeout_sec` says).
   */
  async connect(signal: AbortSignal, timeoutMs: number): Promise<ServerInfo> {
    const spec = this.spec;
    if (spec.transport === "streamable_http") {
      const options = {
        requestInit: { headers: spec.headers },
        fetch: boundedFetch(this.cap, fetch, this.router.relatedNonce),
      };
      try {
        await this.connectWith(
          new StreamableHTTPClientTransport(new URL(spec.url), options),
          signal,
          timeoutMs,
        );
      } catch (error) {
        // Servers that only speak the 2024-11-05 HTTP+SSE transport answer the POST with 4xx;
        // one that wants credentials says so the same way on both, so that answer stands, and
        // one that answers with a JSON-RPC error speaks this transport and refused.
        if (!isHttpClientError(error) || isAuthRequired(error)) throw error;
        const refusal = jsonRpcRefusalIn(error instanceof Error ? error.message : String(error));
        if (refusal !== undefined && speaksModern(refusal)) {
          await this.connectModern(spec, signal, timeoutMs);
        } else if (refusal !== undefined) {
          throw new Error(initializeRefusalMessage(refusal, LATEST_PROTOCOL_VERSION));
        } else {
          await this.connectWith(new SSEClientTransport(new URL(spec.url), options), signal, timeoutMs);
        }
      }
    } else if (spec.transport === "sse") {
      const options = { requestInit: { headers: spec.headers } };
      await this.connectWith(new SSEClientTransport(new URL(spec.url), options), signal, timeoutMs);
    } else {
      const { transport: _stdio, ...launch } = spec;
      const transport = new BoundedStdioClientTransport(launch, this.cap);
      const limiter = new StderrLimiter();
      const tail = new StderrTail();
      const emit = (outputs: StderrOutput[]) => {
        for (const output of outputs) {
          if (output.kind === "line") tail.push(output.text);
          this.events.stderr?.(output);
        }
      };
      transport.stderr.on("data", (chunk: Buffer) => emit(limiter.push(chunk, Date.now())));
      transport.stderr.on("end", () => emit(limiter.end(Date.now())));
      try {
        await this.connectWith(transport, signal, timeoutMs);
      } catch (error) {
        // What the process wrote before it went is piped on a turn later than its exit.
        await new Promise((resolve) => setImmediate(resolve));
        if (error instanceof Error) error.message = withStderrReason(error.message, tail.reason());
        throw error;
      }
    }
    const client = this.connected();
    const serverInfo = McpServerInfoSchema.safeParse(client.getServerVersion());
    return {
      ...(client.getInstructions() ? { instructions: client.getInstructions()! } : {}),
      ...(this.negotiatedProtocol ? { protocolVersion: this.negotiatedProtocol } : {}),
      capabilities: (client.getServerCapabilities() ?? {}) as Record<string, unknown>,
      ...(serverInfo.success ? { serverInfo: serverInfo.data } : {}),
    };
  }

  get pid(): number | null {
    return this.transport instanceof BoundedStdioClientTransport ? this.transport.pid : null;
  }

  get capabilities(): Record<string, unknown> {
    return ((this.modern ?? this.client)?.getServerCapabilities() ?? {}) as Record<string, unknown>;
  }

  async listTools(timeoutMs: number, maxItems?: number): Promise<unknown[]> {
    const tools = await this.listAll("tools/list", "tools", timeoutMs, {
      firstPageOnly: this.negotiatedProtocol === LEGACY_PROTOCOL,
      ...(maxItems ? { maxItems } : {}),
    });
    if (this.modern) this.mcpParams.listed(tools);
    return tools;
  }

  async listResources(timeoutMs: number): Promise<unknown[]> {
    return this.listAll("resources/list", "resources", timeoutMs, {});
  }

  async listResourceTemplates(timeoutMs: number): Promise<unknown[]> {
    return this.listAll("resources/templates/list", "resourceTemplates", timeoutMs, {});
  }

  async listPrompts(timeoutMs: number): Promise<unknown[]> {
    return this.listAll("prompts/list", "prompts", timeoutMs, {});
  }

  /** One page, for callers that page through a single server themselves. */
  async listPage(
    method: PagedMethod,
    cursor: string | undefined,
    timeoutMs: number,
  ): Promise<{ items: unknown[]; nextCursor?: string }> {
    const key = LIST_KEY[method];
    const result = await this.connected()
      .request({ method, params: cursor === undefined ? {} : { cursor } }, LooseListResult(key), {
        timeout: timeoutMs,
      })
      .catch(inWordsOf(method));
    return {
      items: result[key] as unknown[],
      ...(typeof result.nextCursor === "string" ? { nextCursor: result.nextCursor } : {}),
    };
  }

  async readResource(uri: string, timeoutMs: number): Promise<Record<string, unknown>> {
    return this.connected()
      .request({ method: "resources/read", params: { uri } }, LooseResult, { timeout: timeoutMs })
      .catch(inWordsOf("resources/read"));
  }

  /** A raw `prompts/get`; the result comes back as the server sent it. */
  /**
   * A raw `prompts/get`. A 2026-07-28 server may answer with questions first (`input_required`,
   * passed back as its result); the same request sent again with `inputResponses` and the
   * server's `requestState` carries the answers.
   */
  async getPrompt(
    params: {
      name: string;
      arguments?: Record<string, string>;
      inputResponses?: Record<string, unknown>;
      requestState?: string;
    },
    timeoutMs: number,
  ): Promise<Record<string, unknown>> {
    return this.connected()
      .request({ method: "prompts/get", params }, LooseResult, {
        timeout: timeoutMs,
        allowInputRequired: true,
      })
      .catch(inWordsOf("prompts/get"));
  }

  /** A raw `completion/complete`; the result comes back as the server sent it. */
  async complete(
    params: {
      ref: { type: "ref/prompt"; name: string } | { type: "ref/resource"; uri: string };
      argument: { name: string; value: string };
      context?: { arguments?: Record<string, string> };
    },
    timeoutMs: number,
  ): Promise<Record<string, unknown>> {
    return this.connected()
      .request({ method: "completion/complete", params }, LooseResult, { timeout: timeoutMs })
      .catch(inWordsOf("completion/complete"));
  }

  /**
   * A raw `tools/call`. The result comes back as the server sent it: the SDK's own
   * `callTool` would validate it against the output schema, which is not ours to judge.
   * Progress is tracked here rather than by the SDK, whose progress callbacks run a tick
   * late and lose the notifications that arrive in the same read as the result. Every call
   * carries a progress token: it is also how a stdio server can say which call a request is for.
   */
  async callTool(
    params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> },
    options: {
      timeoutMs: number;
      signal?: AbortSignal;
      /** Where this call's elicitations, sampling requests and log messages go. */
      relay: ServerRequestRelay;
      onProgress?: (progress: Record<string, unknown>) => void;
      /** What the caller can answer: told to a 2026-07-28 server, narrowed to what toolbus relays. */
      clientCapabilities?: Record<string, unknown>;
    },
  ): Promise<Record<string, unknown>> {
    if (this.modern) {
      const abort = childAbort(options.signal);
      const { clientCapabilities, ...rest } = options;
      try {
        // Annotated arguments go in Mcp-Param-* headers too (core/mcp-param-headers.ts).
        const headers = this.mcpParams.headersFor(params.name, params.arguments);
        return await callModern(this.modern, params, {
          ...rest,
          signal: abort.signal,
          headers,
          ...(clientCapabilities
            ? { clientCapabilities: capabilitiesForServer(CLIENT_CAPABILITIES, clientCapabilities) }
            : {}),
        }).catch(inWordsOf("tools/call"));
      } finally {
        abort.release();
      }
    }
    const call = this.router.begin(params, options.relay, options.onProgress);
    // One listener on the bus's long-lived signal however many calls: the SDK gets one per call.
    const abort = childAbort(options.signal);
    try {
      return await this.connected()
        .request({ method: "tools/call", params: call.params }, LooseResult, {
          timeout: options.timeoutMs,
          signal: abort.signal,
        })
        .catch(inWordsOf("tools/call"));
    } finally {
      call.end();
      abort.release();
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    const client = this.client;
    const modern = this.modern;
    this.client = undefined;
    this.modern = undefined;
    await client?.close().catch(() => {});
    await modern?.close().catch(() => {});
  }

  /** A server of MCP 2026-07-28 alone, over streamable HTTP (modern-upstream.ts). */
  private async connectModern(
    spec: { url: string; headers: Record<string, string> },
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<void> {
    const modern = await connectModern(spec, {
      clientInfo: CLIENT_INFO,
      capabilities: CLIENT_CAPABILITIES,
      fetch: boundedFetch(this.cap, fetch),
      events: {
        toolsChanged: () => this.events.toolsChanged(),
        resourcesChanged: () => this.events.resourcesChanged(),
        promptsChanged: () => this.events.promptsChanged(),
        closed: (error) => {
          if (this.modern === modern && !this.closing) this.events.closed(error);
        },
      },
      signal,
      timeoutMs,
    }).catch((error: unknown) => {
      throw oversizedFor("server/discover", error);
    });
    this.modern = modern;
    this.negotiatedProtocol = MODERN_PROTOCOL;
  }

  private async connectWith(transport: Transport, signal: AbortSignal, timeoutMs: number): Promise<void> {
    const client = new Client(CLIENT_INFO, { capabilities: CLIENT_CAPABILITIES });
    this.installHandlers(client);
    this.transport = this.interceptIncoming(transport);
    client.onclose = () => {
      if (this.client === client && !this.closing)
        this.events.closed(new Error("MCP server connection closed"));
    };
    // An HTTP transport never closes by itself when the server goes away: its errors (a broken
    // event stream, a refused or session-less POST) are the only sign, so each one is checked.
    if (this.spec.transport !== "stdio") client.onerror = () => void this.checkLiveness(client);
    try {
      await client.connect(this.transport, { signal, timeout: timeoutMs });
    } catch (error) {
      await client.close().catch(() => {});
      throw oversizedFor("initialize", inLegacyWords(error));
    }
    this.client = client;
  }

  /** Pings the server; if it does not answer, the connection is reported closed. */
  private async checkLiveness(client: Client): Promise<void> {
    if (this.checkingLiveness || this.closing || this.client !== client) return;
    this.checkingLiveness = true;
    try {
      await client.ping({ timeout: LIVENESS_TIMEOUT_MS });
    } catch (error) {
      if (this.closing || this.client !== client) return;
      this.closing = true;
      this.client = undefined;
      const said = (inLegacyWords(error) as Error).message;
      this.events.closed(new Error(`the MCP server stopped answering: ${said}`));
      await client.close().catch(() => undefined);
    } finally {
      this.checkingLiveness = false;
    }
  }

  /**
   * Reads what arrives before the SDK does: the negotiated protocol version (the SDK does not
   * expose it for every transport), and the progress and log notifications of calls in flight,
   * relayed at once and in order, before the result that follows them settles the call. And
   * notes the JSON-RPC id each tools/call goes out with, which related requests name.
   */
  private interceptIncoming(transport: Transport): Transport {
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      this.router.sent(message);
      return send(message, options);
    };
    const original = transport.start.bind(transport);
    transport.start = async () => {
      const onmessage = transport.onmessage as ((m: JSONRPCMessage, e?: unknown) => void) | undefined;
      transport.onmessage = (message: JSONRPCMessage, extra?: unknown) => {
        const result = (message as { result?: { protocolVersion?: unknown } }).result;
        if (this.negotiatedProtocol === undefined && typeof result?.protocolVersion === "string") {
          this.negotiatedProtocol = result.protocolVersion;
        }
        if (this.router.relayNotification(message)) return;
        onmessage?.(message, extra);
      };
      await original();
    };
    return transport;
  }

  private installHandlers(client: Client): void {
    client.setNotificationHandler("notifications/tools/list_changed", () => this.events.toolsChanged());
    client.setNotificationHandler("notifications/resources/list_changed", () =>
      this.events.resourcesChanged(),
    );
    client.setNotificationHandler("notifications/prompts/list_changed", () => this.events.promptsChanged());
    // A request that belongs to no call in flight gets an error at once, never a hang.
    client.setRequestHandler("elicitation/create", async (request) => {
      const answer = autoAnswer(request.params, this.policy);
      if (answer !== undefined) return answer;
      const relay = this.router.relayFor("elicitation/create", request);
      return (await relay.elicit(request.params as Record<string, unknown>)) as { action: "decline" };
    });
    client.setRequestHandler("sampling/createMessage", async (request) => {
      const relay = this.router.relayFor("sampling/createMessage", request);
      return (await relay.sample(request.params as Record<string, unknown>)) as CreateMessageResult;
    });
    client.setRequestHandler("roots/list", async () => ({ roots: [] }));
  }

  private async listAll(
    method: string,
    key: string,
    timeoutMs: number,
    options: { firstPageOnly?: boolean; maxItems?: number },
  ): Promise<unknown[]> {
    const client = this.connected();
    const fetchPage = async (cursor: string | undefined): Promise<Page<unknown>> => {
      const result = await client
        .request(
          { method: method as "tools/list", params: cursor === undefined ? {} : { cursor } },
          LooseListResult(key),
          { timeout: timeoutMs },
        )
        .catch(inWordsOf(method));
      return { items: result[key] as unknown[], nextCursor: result.nextCursor as string | undefined };
    };
    return paginate(fetchPage, {
      method,
      limits: { timeoutMs, ...(options.maxItems ? { maxItems: options.maxItems } : {}) },
      ...(options.firstPageOnly ? { firstPageOnly: true } : {}),
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref()),
    });
  }

  private connected(): PeerClient {
    if (this.modern) return this.modern as unknown as PeerClient;
    const client = this.client;
    if (!client) throw new Error("MCP server is not connected");
    // A 2025-era server's errors read as they always have (legacy-words.ts).
    return {
      request: (request, resultSchema, options) =>
        client.request(request, resultSchema, options).catch((error: unknown) => {
          throw inLegacyWords(error);
        }) as Promise<Record<string, unknown>>,
      getServerVersion: () => client.getServerVersion(),
      getInstructions: () => client.getInstructions(),
      getServerCapabilities: () => client.getServerCapabilities(),
    };
  }
}

/** Rethrows a request's error, a reply over the size cap in the words of `method`. */
function inWordsOf(method: string): (error: unknown) => never {
  return (error) => {
    throw oversizedFor(method, error);
  };
}

/** Per long-lived signal (the bus's), the calls it aborts; one listener each, however many calls. */
const children = new WeakMap<AbortSignal, Set<AbortController>>();

/** An abort signal for one call that follows `parent`, released when the call ends. */
function childAbort(parent: AbortSignal | undefined): { signal: AbortSignal; release(): void } {
  const child = new AbortController();
  if (!parent) return { signal: child.signal, release: () => {} };
  if (parent.aborted) child.abort(parent.reason);
  let set = children.get(parent);
  if (!set) {
    const calls = new Set<AbortController>();
    children.set(parent, calls);
    parent.addEventListener("abort", () => {
      for (const call of calls) call.abort(parent.reason);
    });
    set = calls;
  }
  set.add(child);
  return { signal: child.signal, release: () => set.delete(child) };
}

/** The server refused us for want of credentials (HTTP 401, or the SDK's auth error). */
export function isAuthRequired(error: unknown): boolean {
  const { code, name } = error as { code?: unknown; name?: unknown };
  return code === 401 || name === "UnauthorizedError";
}

function isHttpClientError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === "number" && code >= 400 && code < 500;
}

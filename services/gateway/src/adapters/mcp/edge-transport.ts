/**
 * A session's transport: the server side of MCP's streamable HTTP, on node's request and
 * response, for the SDK `Server` of one session (it implements the SDK's `Transport`). The edge
 * (adapters/http/http-app.ts) has parsed the body, validated each message once, checked the
 * headers (core/streamable-http.ts `headerRefusal`) and found the session; here:
 * - POST: initialize assigns the session its id (`onsessioninitialized`); notifications and
 *   answers alone are taken with 202; requests are answered on the POST's own response
 *   (adapters/http/answer-stream.ts: JSON, or SSE once the server sends something else for them
 *   first), which ends when every request of the POST is answered;
 * - GET: the session's one standalone SSE stream (409 for a second while it is open) for what
 *   the server sends on no request's behalf. With no stream open that is dropped: the gateway
 *   keeps no event store, so there is nothing to resume (as with the SDK's transport without one);
 * - DELETE: `onsessionclosed` settles, the transport closes, then 200.
 * A session rebuilt on another replica, and answers forwarded from one, are fed in with
 * `replay` and `receive`, without HTTP.
 * Each message goes to the server with its request's headers and principal (`EdgeMessageExtra`):
 * the headers as node parsed them, not a web `Request` built per message (the v2 SDK's
 * `MessageExtraInfo.request`); the session's server hands them to its handlers (mcp-session.ts).
 */
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import {
  type AuthInfo,
  type JSONRPCErrorResponse,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type MessageExtraInfo,
  type RequestId,
  specTypeSchemas,
  type Transport,
  type TransportSendOptions,
} from "@modelcontextprotocol/server";
import type { Principal } from "@toolbus/protocol";
import { JsonRpcCode, jsonRpcError } from "../../core/jsonrpc-errors.js";
import { type EdgeRefusal, isAnswer, sessionNotFound } from "../../core/streamable-http.js";
import { AnswerStream, ServerStream } from "../http/answer-stream.js";

export interface EdgeTransportOptions {
  /** The id a new session gets at its initialize request. */
  sessionIdGenerator(): string;
  /** The session has its id (its initialize request arrived). */
  onsessioninitialized?(sessionId: string): void;
  /** The client ended the session with DELETE; the DELETE is answered once this settles. */
  onsessionclosed?(sessionId: string): Promise<void>;
  /** Sees each error answer before it goes out, and may send another in its place. */
  errorAnswer?(message: JSONRPCErrorResponse & { id: RequestId }): JSONRPCErrorResponse & { id: RequestId };
}

/** One request to `/mcp` for this session, as the edge checked it. */
export interface EdgeRequest {
  method: "POST" | "GET" | "DELETE";
  headers: IncomingHttpHeaders;
  /** A POST's JSON-RPC messages, validated. */
  messages?: readonly JSONRPCMessage[];
  /** The POST's body was a JSON array. */
  batch?: boolean;
  /** The POST is the session's initialize request (alone: the edge refuses it in a batch). */
  initialize?: boolean;
  /** Who the edge authenticated for this request; handlers find it as `ctx.http.authInfo.extra.principal`. */
  principal?: Principal;
}

/**
 * What goes with each message of a request: the SDK's extra info (the principal as `authInfo`)
 * and the request's headers, which the v2 SDK would only take as a web `Request`.
 */
export interface EdgeMessageExtra extends MessageExtraInfo {
  headers: IncomingHttpHeaders;
}

/** What the server sends for a request: to a POST's response, or to whoever replayed it. */
interface AnswerSink {
  event(message: JSONRPCMessage): void;
  answer(message: JSONRPCMessage & { id: RequestId }): void;
  end(): void;
}

export class EdgeTransport implements Transport {
  onmessage?: Transport["onmessage"];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  #sessionId: string | undefined;
  readonly #options: EdgeTransportOptions;
  /** The requests awaiting their answer, with where what the server sends for them goes. */
  readonly #answering = new Map<RequestId, AnswerSink>();
  #standalone: ServerStream | undefined;
  #started = false;
  #closed = false;

  constructor(options: EdgeTransportOptions) {
    this.#options = options;
  }

  get sessionId(): string | undefined {
    return this.#sessionId;
  }

  async start(): Promise<void> {
    if (this.#started) throw new Error("the edge transport was already started");
    this.#started = true;
  }

  /** Answers one request to `/mcp` on `raw`. Resolves once it is answered or its stream is open. */
  async handle(request: EdgeRequest, raw: ServerResponse): Promise<void> {
    if (this.#closed) return refuse(raw, sessionNotFound);
    switch (request.method) {
      case "POST":
        return this.#post(request, raw);
      case "GET":
        return this.#get(request, raw);
      case "DELETE":
        return this.#delete(request, raw);
    }
  }

  /** A session rebuilt elsewhere: it takes the id it had. Before `replay` of its initialize. */
  resume(sessionId: string): void {
    this.#sessionId = sessionId;
  }

  /** Hands `request` to the server without HTTP; resolves with its answer (or undefined if it closed first). */
  replay(request: JSONRPCRequest): Promise<JSONRPCMessage | undefined> {
    return new Promise((resolve) => {
      this.#answering.set(request.id, {
        event: () => undefined,
        answer: (message) => {
          this.#answering.delete(request.id);
          resolve(message);
        },
        end: () => resolve(undefined),
      });
      this.onmessage?.(request);
    });
  }

  /** Notifications or answers for the server, without HTTP (forwarded by another replica). */
  receive(messages: readonly JSONRPCMessage[]): void {
    if (this.#closed) return;
    for (const message of messages) this.onmessage?.(message);
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (isAnswer(message)) {
      const { errorAnswer } = this.#options;
      // A request whose client went away has no sink: its answer has nowhere to go.
      this.#answering
        .get(message.id)
        ?.answer("error" in message && errorAnswer ? errorAnswer(message) : message);
      return;
    }
    const related = options?.relatedRequestId;
    if (related !== undefined) {
      this.#answering.get(related)?.event(message);
      return;
    }
    this.#standalone?.event(message);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const sink of new Set(this.#answering.values())) sink.end();
    this.#answering.clear();
    this.#standalone?.end();
    this.onclose?.();
  }

  #post(request: EdgeRequest, raw: ServerResponse): void {
    const messages = request.messages ?? [];
    if (request.initialize) {
      if (this.#sessionId !== undefined) {
        refuse(raw, {
          status: 400,
          code: JsonRpcCode.invalidRequest,
          message: "Invalid Request: Server already initialized; send initialize only to start a session",
        });
        return;
      }
      this.#sessionId = this.#options.sessionIdGenerator();
      this.#options.onsessioninitialized?.(this.#sessionId);
    } else {
      const refusal = this.#sessionRefusal(request.headers);
      if (refusal) {
        refuse(raw, refusal);
        return;
      }
    }
    const extra: EdgeMessageExtra = {
      headers: request.headers,
      ...(request.principal ? { authInfo: principalAuthInfo(request.principal) } : {}),
    };
    const ids: RequestId[] = [];
    for (const message of messages) {
      if ("method" in message && "id" in message) ids.push(message.id);
    }
    if (ids.length === 0) {
      raw.writeHead(202).end();
      for (const message of messages) this.onmessage?.(message, extra);
      return;
    }
    const stream = new AnswerStream(raw, this.#sessionHeader(), ids, request.batch === true, () => {
      for (const id of ids) if (this.#answering.get(id) === stream) this.#answering.delete(id);
    });
    for (const id of ids) this.#answering.set(id, stream);
    for (const message of messages) this.onmessage?.(message, extra);
  }

  #get(request: EdgeRequest, raw: ServerResponse): void {
    const refusal = this.#sessionRefusal(request.headers);
    if (refusal) {
      refuse(raw, refusal);
      return;
    }
    if (this.#standalone) {
      refuse(raw, {
        status: 409,
        code: JsonRpcCode.serverError,
        message:
          "Conflict: Only one SSE stream is allowed per session; this session's GET stream is open already, close it before opening another",
      });
      return;
    }
    const stream = new ServerStream(raw, this.#sessionHeader(), () => {
      if (this.#standalone === stream) this.#standalone = undefined;
    });
    this.#standalone = stream;
  }

  async #delete(request: EdgeRequest, raw: ServerResponse): Promise<void> {
    const refusal = this.#sessionRefusal(request.headers);
    if (refusal) return refuse(raw, refusal);
    const sessionId = this.#sessionId as string;
    try {
      await this.#options.onsessionclosed?.(sessionId);
    } finally {
      await this.close();
    }
    raw.writeHead(200).end();
  }

  /** A request after initialize must name this session (the edge found it by that id). */
  #sessionRefusal(headers: IncomingHttpHeaders): EdgeRefusal | undefined {
    if (this.#sessionId === undefined) {
      return {
        status: 400,
        code: JsonRpcCode.serverError,
        message: "Bad Request: Server not initialized; start the session with an initialize request",
      };
    }
    const given = headers["mcp-session-id"];
    return (Array.isArray(given) ? given[0] : given) === this.#sessionId ? undefined : sessionNotFound;
  }

  #sessionHeader(): Record<string, string> {
    return this.#sessionId === undefined ? {} : { "mcp-session-id": this.#sessionId };
  }
}

function refuse(raw: ServerResponse, refusal: EdgeRefusal): void {
  const body = JSON.stringify(jsonRpcError(refusal.code, refusal.message));
  raw.writeHead(refusal.status, {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(body)),
  });
  raw.end(body);
}

/** The SDK's carrier for who made a request: the principal rides in `extra`, never a token. */
function principalAuthInfo(principal: Principal): AuthInfo {
  return { token: "", clientId: principal.name, scopes: [...(principal.scopes ?? [])], extra: { principal } };
}

/** `message` as a JSON-RPC 2.0 message (MCP's schema: a request, notification, result or error), else undefined. */
export function jsonRpcMessage(message: unknown): JSONRPCMessage | undefined {
  const checked = specTypeSchemas.JSONRPCMessage["~standard"].validate(message);
  return checked.issues === undefined ? checked.value : undefined;
}

/** The principal `principalAuthInfo` put on a request, if any. */
export function requestPrincipal(authInfo: AuthInfo | undefined): Principal | undefined {
  const principal = authInfo?.extra?.principal;
  return typeof principal === "object" && principal !== null ? (principal as Principal) : undefined;
}

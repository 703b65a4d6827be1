/**
 * The gateway's HTTP surface: `/mcp` (streamable HTTP), `/healthz` and `/readyz`, and the
 * checks in front of them: the shared guard (Host/Origin, bearer tokens and roles, security
 * headers; @toolbus/http-guard), the body size limit, the batch size limit, and a JSON-RPC
 * error body for everything malformed.
 *
 * A request to `/mcp` takes one path: its headers checked (core/streamable-http.ts), a POST's
 * messages validated once, its session created (initialize) or found (here, or rebuilt from
 * another replica's record), then the session's transport (adapters/mcp/edge-transport.ts)
 * answers it on the hijacked node response. The one step before it: a POST of nothing but a
 * client's answers to a question another replica asked goes to that replica (202). A POST of the
 * 2026-07-28 era (its `_meta` envelope or its MCP-Protocol-Version say so) has no session: once
 * its view and scopes are checked it goes to the endpoint's per-request handler
 * (adapters/mcp/modern-edge.ts).
 */
import {
  type InitializeRequest,
  isInitializeRequest,
  type JSONRPCMessage,
  type RequestId,
} from "@modelcontextprotocol/server";
import type { Logger } from "@toolbus/bus";
import type { GatewayPrincipal } from "@toolbus/config";
import {
  ANONYMOUS,
  type BrowserSignIn,
  bearerChallenge,
  installHttpGuard,
  installProbes,
  metadataUrl,
  type OAuthResourceServer,
  type Principal,
  principalOf,
  requestOrigin,
  routeAccess,
  type StreamLimits,
  takeStreamSlot,
} from "@toolbus/http-guard";
import { requestBodyTooLarge } from "@toolbus/protocol";
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from "fastify";
import { JsonRpcCode, jsonRpcError } from "../../core/jsonrpc-errors.js";
import { type EdgeRefusal, headerRefusal, sessionNotFound } from "../../core/streamable-http.js";
import { type GatewayView, MCP_PATH } from "../../core/views.js";
import { jsonRpcMessage } from "../mcp/edge-transport.js";
import type { McpSession } from "../mcp/mcp-session.js";
import { isModernRequest, type ModernEdge } from "../mcp/modern-edge.js";
import { ClientSessionsFull, type SessionRegistry, SessionsFull } from "../mcp/session-registry.js";

export interface HttpAppDeps {
  registry: SessionRegistry;
  logger: Logger;
  allowedHosts: readonly string[];
  /** Accepted bearer tokens with their principals; empty, and no `oauth`, turns auth off. */
  principals: readonly GatewayPrincipal[];
  /** OAuth access tokens accepted beside them (`[gateway.oauth]`), and the resource metadata served. */
  oauth?: OAuthResourceServer;
  /** Browser sign-in for the console and the inbox (`[gateway.signin]`): its routes and session cookie. */
  signin?: BrowserSignIn;
  /** `[gateway] public_url`: what the resources are named after, behind a proxy. */
  publicUrl?: string;
  /** Open event streams (`/v1/events`, MCP GET streams, the approvals stream when mounted). */
  streams: StreamLimits;
  /** JSON-RPC messages in one POST. */
  maxBatchSize: number;
  bodyLimitBytes: number;
  /** What `/readyz` reports. */
  readiness(): { bus: boolean; catalog: boolean };
  /** `[views.<name>]`, by name, served at `/mcp/<name>`. */
  views?: ReadonlyMap<string, GatewayView>;
  /** The 2026-07-28 era of each endpoint (by view; undefined: `/mcp`). */
  modern(view: GatewayView | undefined): ModernEdge;
  /**
   * The scopes a call of the tool MCP clients know as `tool` (in `view`) requires, and those of
   * them `principal` lacks: a call lacking any is refused with 403 and the step-up challenge.
   */
  scopesFor?(
    tool: string,
    view: GatewayView | undefined,
    principal: Principal,
  ): Promise<{ required: readonly string[]; missing: readonly string[] }>;
}

export function buildHttpApp(deps: HttpAppDeps): FastifyInstance {
  const { logger } = deps;
  const app = Fastify({ logger: false, bodyLimit: deps.bodyLimitBytes, return503OnClosing: true });
  // MCP messages are JSON only: any other content type is answered 415 rather than parsed.
  app.removeContentTypeParser("text/plain");
  installHttpGuard(app, {
    allowedHosts: deps.allowedHosts,
    principals: deps.principals,
    ...(deps.oauth ? { oauth: deps.oauth } : {}),
    ...(deps.signin ? { signin: deps.signin } : {}),
    ...(deps.publicUrl === undefined ? {} : { publicUrl: deps.publicUrl }),
    streams: deps.streams,
    // The edge's own refusals keep the JSON-RPC shape of /mcp.
    refusal: (_status, message) => jsonRpcError(JsonRpcCode.serverError, message),
    onRefused: (refused) => logger.info(refused, "refused a request"),
  });

  app.setErrorHandler((error: FastifyError, _request, reply) => {
    const failure = httpFailure(error, deps.bodyLimitBytes);
    if (failure.status >= 500) logger.error({ err: error }, "request failed");
    else logger.info({ code: error.code, status: failure.status }, failure.message);
    return reply.code(failure.status).send(jsonRpcError(failure.code, failure.message));
  });

  app.setNotFoundHandler((request, reply) =>
    reply
      .code(404)
      .send(
        jsonRpcError(
          JsonRpcCode.serverError,
          `Not Found: ${request.method} ${request.url}; the MCP endpoint is /mcp`,
        ),
      ),
  );

  installProbes(app, deps.readiness);

  app.all(MCP_PATH, routeAccess("call"), (request, reply) => handleMcp(request, reply, deps, undefined));
  app.all<{ Params: { view: string } }>(`${MCP_PATH}/:view`, routeAccess("call"), (request, reply) => {
    const view = deps.views?.get(request.params.view);
    if (view === undefined) {
      const known = [...(deps.views?.values() ?? [])].map((known) => known.path);
      return reply
        .code(404)
        .send(
          jsonRpcError(
            JsonRpcCode.serverError,
            `Not Found: no view is named ${JSON.stringify(request.params.view)}; the MCP endpoints are ${[MCP_PATH, ...known].join(", ")}`,
          ),
        );
    }
    return handleMcp(request, reply, deps, view);
  });
  return app;
}

async function handleMcp(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: HttpAppDeps,
  view: GatewayView | undefined,
): Promise<unknown> {
  const { registry, logger } = deps;
  const principal: Principal = principalOf(request) ?? ANONYMOUS;
  if (view !== undefined && !view.admits(principal)) {
    logger.info(
      { principal: principal.name, view: view.name },
      "refused a view to a principal outside its groups",
    );
    return reply
      .code(403)
      .send(
        jsonRpcError(
          JsonRpcCode.serverError,
          `Forbidden: ${view.path} is for members of its groups, and ${principal.name} is not one; use ${MCP_PATH} or ask an admin to add you`,
        ),
      );
  }
  const method = request.method;
  if (method !== "POST" && method !== "GET" && method !== "DELETE") {
    return reply
      .code(405)
      .header("allow", "GET, POST, DELETE")
      .send(
        jsonRpcError(
          JsonRpcCode.serverError,
          `Method Not Allowed: ${method}; /mcp takes POST, GET and DELETE`,
        ),
      );
  }
  const headers = request.headers;
  const sessionId = headerValue(headers["mcp-session-id"]);
  const checked = {
    accept: headerValue(headers.accept),
    contentType: headerValue(headers["content-type"]),
    protocolVersion: headerValue(headers["mcp-protocol-version"]),
  };
  let session: McpSession | undefined;
  let messages: JsonRpcMessages = [];
  let requestIds: RequestId[] = [];
  let onlyResponses = false;
  /** The session was created for this POST's initialize request. */
  let created = false;
  if (method === "POST") {
    const accepted = headerRefusal(method, checked, true);
    if (accepted) return refuse(reply, accepted);
    const parsed = jsonRpcMessages(request.body, deps.maxBatchSize);
    if (!parsed.ok) return reply.code(400).send(jsonRpcError(JsonRpcCode.invalidRequest, parsed.message));
    messages = parsed.value;
    requestIds = messages.flatMap((message) =>
      "method" in message && "id" in message && message.id !== undefined ? [message.id] : [],
    );
    onlyResponses = messages.every((message) => !("method" in message));
    if (await isModernRequest(request, request.body)) {
      const refused = await scopeRefusal(request, reply, deps, view, principal, messages);
      if (refused) return refused.reply;
      // A subscriptions/listen answer is an event stream that lasts: one of the process's streams.
      let releaseStream: () => void = () => undefined;
      if (messages.some((message) => "method" in message && message.method === "subscriptions/listen")) {
        const stream = takeStream(request, reply, principal, logger);
        if (!stream.ok) return stream.reply;
        releaseStream = stream.release;
      }
      reply.hijack();
      reply.raw.once("close", () => releaseStream());
      try {
        await deps.modern(view).serve(request, request.body, principal, reply.raw);
      } catch (error) {
        failed(reply.raw, error, logger);
      }
      return reply;
    }
    // The method first: the schema check behind isInitializeRequest is costly when it fails.
    const init = messages.find(
      (message): message is (typeof messages)[number] & InitializeRequest =>
        "method" in message && message.method === "initialize" && isInitializeRequest(message),
    );
    if (init) {
      if (messages.length > 1) {
        return reply
          .code(400)
          .send(
            jsonRpcError(
              JsonRpcCode.invalidRequest,
              "Invalid Request: send initialize alone, not in a batch",
            ),
          );
      }
      try {
        session = await registry.create(init.params, principal.name, view?.name);
        created = true;
      } catch (error) {
        return noRoom(error, reply, principal, logger);
      }
    } else {
      const version = headerRefusal(method, checked);
      if (version) return refuse(reply, version);
    }
  } else {
    const refusal = headerRefusal(method, checked);
    if (refusal) return refuse(reply, refusal);
  }
  if (!session) {
    if (sessionId === undefined) {
      return reply
        .code(400)
        .send(
          jsonRpcError(
            JsonRpcCode.serverError,
            "Bad Request: Mcp-Session-Id header is required; start a session with an initialize request first",
          ),
        );
    }
    // Another principal's session is as unknown as one that never existed.
    try {
      session = await registry.find(sessionId, principal.name, view?.name);
    } catch (error) {
      return noRoom(error, reply, principal, logger);
    }
    if (!session) return refuse(reply, sessionNotFound);
  }

  const refused = await scopeRefusal(request, reply, deps, view, principal, messages);
  if (refused) return refused.reply;

  const body = request.body;
  if (onlyResponses && registry.forwardIfAskedElsewhere(session, Array.isArray(body) ? body : [body])) {
    return reply.code(202).send();
  }

  // A GET opens the session's stream of server messages: one of the process's event streams.
  let releaseStream: () => void = () => undefined;
  if (method === "GET") {
    const stream = takeStream(request, reply, principal, logger);
    if (!stream.ok) return stream.reply;
    releaseStream = stream.release;
  }

  reply.hijack();
  const raw = reply.raw;
  const finished = registry.begin(session);
  const held = session;
  raw.once("close", () => {
    releaseStream();
    finished();
    if (!raw.writableFinished && requestIds.length > 0) held.abortRequests(requestIds);
  });
  try {
    await session.handle(
      { method, headers, messages, batch: Array.isArray(request.body), initialize: created, principal },
      raw,
    );
  } catch (error) {
    failed(raw, error, logger);
  }
  return reply;
}

/**
 * One of the process's event streams for this request (an MCP GET stream, a subscriptions/listen
 * answer), or the refusal sent (429 or 503). The reply comes wrapped: a Fastify reply is a thenable.
 */
function takeStream(
  request: FastifyRequest,
  reply: FastifyReply,
  principal: Principal,
  logger: Logger,
): { ok: true; release(): void } | { ok: false; reply: FastifyReply } {
  const slot = takeStreamSlot(request);
  if (slot.ok) return { ok: true, release: slot.release };
  logger.info({ principal: principal.name }, slot.message);
  return {
    ok: false,
    reply: reply
      .code(slot.status)
      .header("retry-after", "5")
      .send(jsonRpcError(JsonRpcCode.serverError, slot.message)),
  };
}

/** The transport failed on a request: 500 if nothing was sent yet, else the response is cut. */
function failed(raw: FastifyReply["raw"], error: unknown, logger: Logger): void {
  logger.error({ err: error }, "the MCP transport failed on a request");
  if (!raw.headersSent) {
    raw.writeHead(500, { "content-type": "application/json" });
    raw.end(
      JSON.stringify(
        jsonRpcError(JsonRpcCode.internalError, "Internal error: the gateway failed on this request"),
      ),
    );
  } else if (!raw.writableEnded) {
    raw.end();
  }
}

/**
 * A tool that requires scopes the token lacks: 403 with the step-up challenge (the spec's scope
 * rules), answered at the HTTP level so the client can sign in again asking for them. The reply
 * comes wrapped: a Fastify reply is a thenable, which an async function's caller would await.
 */
async function scopeRefusal(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: HttpAppDeps,
  view: GatewayView | undefined,
  principal: Principal,
  messages: JsonRpcMessages,
): Promise<{ reply: FastifyReply } | undefined> {
  if (!deps.scopesFor) return undefined;
  for (const message of messages) {
    if (!("method" in message) || message.method !== "tools/call") continue;
    const name = (message.params as { name?: unknown } | undefined)?.name;
    if (typeof name !== "string") continue;
    const { required, missing } = await deps.scopesFor(name, view, principal);
    if (missing.length > 0) {
      return { reply: insufficientScope(request, reply, deps, view, name, required, missing) };
    }
  }
  return undefined;
}

function insufficientScope(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: HttpAppDeps,
  view: GatewayView | undefined,
  tool: string,
  required: readonly string[],
  missing: readonly string[],
): FastifyReply {
  const origin = requestOrigin(deps.publicUrl, request.headers.host);
  const path = view?.path ?? MCP_PATH;
  reply.header(
    "www-authenticate",
    bearerChallenge({
      ...(origin === undefined || deps.oauth === undefined
        ? {}
        : { resourceMetadata: metadataUrl(origin, path) }),
      scopes: required,
      error: "insufficient_scope",
      errorDescription: `${tool} requires the scope(s) ${missing.join(" ")}`,
    }),
  );
  return reply
    .code(403)
    .send(
      jsonRpcError(
        JsonRpcCode.serverError,
        `Forbidden: the tool ${tool} requires the scope(s) ${missing.join(", ")}, which this access token does not hold; sign in again asking for ${required.join(" ")}`,
      ),
    );
}

function refuse(reply: FastifyReply, refusal: EdgeRefusal): FastifyReply {
  return reply.code(refusal.status).send(jsonRpcError(refusal.code, refusal.message));
}

/** No room for the client's session: 429 when its own sessions are all busy, 503 when the replica's are. */
function noRoom(error: unknown, reply: FastifyReply, principal: Principal, logger: Logger): FastifyReply {
  if (!(error instanceof SessionsFull || error instanceof ClientSessionsFull)) throw error;
  if (error instanceof SessionsFull) logger.warn(error.message);
  else logger.info({ principal: principal.name }, error.message);
  return reply
    .code(error instanceof SessionsFull ? 503 : 429)
    .header("retry-after", "5")
    .send(jsonRpcError(JsonRpcCode.serverError, error.message));
}

type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

type JsonRpcMessages = JSONRPCMessage[];

function jsonRpcMessages(body: unknown, maxBatchSize: number): Parsed<JsonRpcMessages> {
  const items = Array.isArray(body) ? body : [body];
  if (items.length === 0) return { ok: false, message: "Invalid Request: the batch is empty" };
  if (items.length > maxBatchSize) {
    return {
      ok: false,
      message: `Invalid Request: the batch has ${items.length} messages, over the gateway's limit of ${maxBatchSize} ([gateway] max_batch_size); send them in smaller batches`,
    };
  }
  const messages = [];
  for (const [index, item] of items.entries()) {
    const parsed = jsonRpcMessage(item);
    if (parsed === undefined) {
      const where = Array.isArray(body) ? ` (batch item ${index})` : "";
      return {
        ok: false,
        message: `Invalid Request${where}: not a JSON-RPC 2.0 message; send {"jsonrpc":"2.0","id":1,"method":"…","params":{…}}, a notification (no id) or a response`,
      };
    }
    messages.push(parsed);
  }
  return { ok: true, value: messages };
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function httpFailure(
  error: FastifyError,
  bodyLimitBytes: number,
): { status: number; code: number; message: string } {
  switch (error.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return {
        status: 413,
        code: JsonRpcCode.serverError,
        message: `Payload Too Large: ${requestBodyTooLarge(bodyLimitBytes)}`,
      };
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return {
        status: 415,
        code: JsonRpcCode.serverError,
        message: "Unsupported Media Type: send the JSON-RPC message with Content-Type: application/json",
      };
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return {
        status: 400,
        code: JsonRpcCode.parseError,
        message: "Parse error: the body is empty; send a JSON-RPC message",
      };
    case "FST_ERR_CTP_INVALID_JSON_BODY":
      return {
        status: 400,
        code: JsonRpcCode.parseError,
        message: `Parse error: the body is not valid JSON (${error.message})`,
      };
  }
  if (error instanceof SyntaxError || error.statusCode === 400) {
    return {
      status: 400,
      code: JsonRpcCode.parseError,
      message: `Parse error: the body is not valid JSON (${error.message})`,
    };
  }
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return { status: error.statusCode, code: JsonRpcCode.serverError, message: error.message };
  }
  return {
    status: 500,
    code: JsonRpcCode.internalError,
    message: "Internal error: the gateway failed on this request",
  };
}

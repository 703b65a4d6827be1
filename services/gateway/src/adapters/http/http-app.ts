/**
 * The gateway's HTTP surface: `/mcp` (streamable HTTP), `/healthz` and `/readyz`, and the
 * checks in front of them: the shared guard (Host/Origin, bearer tokens and roles, security
 * headers; @toolbus/http-guard), the body size limit, the batch size limit, and a JSON-RPC
 * error body for everything malformed.
 */
import type { IncomingHttpHeaders } from "node:http";
import {
  type InitializeRequest,
  isInitializeRequest,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  type JSONRPCRequest,
  type RequestId,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "@toolbus/bus";
import type { GatewayPrincipal } from "@toolbus/config";
import {
  ANONYMOUS,
  installHttpGuard,
  installProbes,
  type Principal,
  principalOf,
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
import type { McpSession } from "../mcp/mcp-session.js";
import { ClientSessionsFull, type SessionRegistry, SessionsFull } from "../mcp/session-registry.js";
import { sendWebResponse, toWebRequest } from "./web-bridge.js";

export interface HttpAppDeps {
  registry: SessionRegistry;
  logger: Logger;
  allowedHosts: readonly string[];
  /** Accepted bearer tokens with their principals; empty turns auth off. */
  principals: readonly GatewayPrincipal[];
  /** Open event streams (`/v1/events`, MCP GET streams, the approvals stream when mounted). */
  streams: StreamLimits;
  /** JSON-RPC messages in one POST. */
  maxBatchSize: number;
  bodyLimitBytes: number;
  /** What `/readyz` reports. */
  readiness(): { bus: boolean; catalog: boolean };
}

export function buildHttpApp(deps: HttpAppDeps): FastifyInstance {
  const { logger } = deps;
  const app = Fastify({ logger: false, bodyLimit: deps.bodyLimitBytes, return503OnClosing: true });
  // MCP messages are JSON only: any other content type is answered 415 rather than parsed.
  app.removeContentTypeParser("text/plain");
  installHttpGuard(app, {
    allowedHosts: deps.allowedHosts,
    principals: deps.principals,
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

  app.all("/mcp", routeAccess("call"), (request, reply) => handleMcp(request, reply, deps));
  return app;
}

async function handleMcp(request: FastifyRequest, reply: FastifyReply, deps: HttpAppDeps): Promise<unknown> {
  const { registry, logger } = deps;
  const principal: Principal = principalOf(request) ?? ANONYMOUS;
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
  const sessionId = headerValue(request.headers["mcp-session-id"]);
  let session: McpSession | undefined;
  let requestIds: RequestId[] = [];
  let onlyResponses = false;
  /** The POST's one JSON-RPC request, when the session can take it without the SDK transport. */
  let shortcut: JSONRPCRequest | undefined;
  if (method === "POST") {
    const messages = jsonRpcMessages(request.body, deps.maxBatchSize);
    if (!messages.ok) return reply.code(400).send(jsonRpcError(JsonRpcCode.invalidRequest, messages.message));
    shortcut = Array.isArray(request.body) ? undefined : shortcutRequest(messages.value[0], request.headers);
    requestIds = messages.value.flatMap((message) =>
      "method" in message && "id" in message && message.id !== undefined ? [message.id] : [],
    );
    onlyResponses = messages.value.every((message) => !("method" in message));
    // The method first: the schema check behind isInitializeRequest is costly when it fails.
    const init = messages.value.find(
      (message): message is (typeof messages.value)[number] & InitializeRequest =>
        "method" in message && message.method === "initialize" && isInitializeRequest(message),
    );
    if (init) {
      if (messages.value.length > 1) {
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
        session = await registry.create(init.params, principal.name);
      } catch (error) {
        return noRoom(error, reply, principal, logger);
      }
    }
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
      session = await registry.find(sessionId, principal.name);
    } catch (error) {
      return noRoom(error, reply, principal, logger);
    }
    if (!session) {
      return reply
        .code(404)
        .send(
          jsonRpcError(
            JsonRpcCode.sessionNotFound,
            "Session not found: it expired or was ended; start a new session with an initialize request",
          ),
        );
    }
  }

  const body = request.body;
  if (onlyResponses && registry.forwardIfAskedElsewhere(session, Array.isArray(body) ? body : [body])) {
    return reply.code(202).send();
  }

  // A GET opens the session's stream of server messages: one of the process's event streams.
  let releaseStream: () => void = () => undefined;
  if (method === "GET") {
    const slot = takeStreamSlot(request);
    if (!slot.ok) {
      logger.info({ principal: principal.name }, slot.message);
      return reply
        .code(slot.status)
        .header("retry-after", "5")
        .send(jsonRpcError(JsonRpcCode.serverError, slot.message));
    }
    releaseStream = slot.release;
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
    if (shortcut && !session.closed) {
      session.accept(shortcut, raw, request.headers);
      return reply;
    }
    const response = await session.handle(
      toWebRequest(request),
      method === "POST" ? request.body : undefined,
    );
    await sendWebResponse(response, raw);
  } catch (error) {
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
  return reply;
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

/**
 * A request the session can take directly: one request (not initialize, which makes the session)
 * with the headers the SDK transport would accept as they are. Anything else goes through the
 * SDK transport, which answers it or says what is wrong with it.
 */
function shortcutRequest(
  message: JSONRPCMessage | undefined,
  headers: IncomingHttpHeaders,
): JSONRPCRequest | undefined {
  if (!message || !("method" in message) || !("id" in message) || message.method === "initialize") {
    return undefined;
  }
  const accept = headerValue(headers.accept) ?? "";
  if (!accept.includes("application/json") || !accept.includes("text/event-stream")) return undefined;
  const version = headerValue(headers["mcp-protocol-version"]);
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return undefined;
  return message;
}

type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

function jsonRpcMessages(
  body: unknown,
  maxBatchSize: number,
): Parsed<Array<ReturnType<typeof JSONRPCMessageSchema.parse>>> {
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
    const parsed = JSONRPCMessageSchema.safeParse(item);
    if (!parsed.success) {
      const where = Array.isArray(body) ? ` (batch item ${index})` : "";
      return {
        ok: false,
        message: `Invalid Request${where}: not a JSON-RPC 2.0 message; send {"jsonrpc":"2.0","id":1,"method":"…","params":{…}}, a notification (no id) or a response`,
      };
    }
    messages.push(parsed.data);
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

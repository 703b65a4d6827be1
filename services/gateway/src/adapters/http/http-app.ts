/**
 * The gateway's HTTP surface: `/mcp` (streamable HTTP), `/healthz` and `/readyz`, and the
 * checks in front of them: Host/Origin (DNS rebinding), bearer tokens, the body size limit,
 * and a JSON-RPC error body for everything malformed.
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
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from "fastify";
import { bearerToken } from "../../core/bearer.js";
import { checkHost } from "../../core/host-check.js";
import { formatBytes, JsonRpcCode, jsonRpcError } from "../../core/jsonrpc-errors.js";
import type { McpSession } from "../mcp/mcp-session.js";
import { type SessionRegistry, SessionsFull } from "../mcp/session-registry.js";
import { tokenMatcher } from "./bearer-tokens.js";
import { sendWebResponse, toWebRequest } from "./web-bridge.js";

export interface HttpAppDeps {
  registry: SessionRegistry;
  logger: Logger;
  allowedHosts: readonly string[];
  /** Accepted bearer tokens; empty turns auth off. */
  tokens: readonly string[];
  bodyLimitBytes: number;
  /** What `/readyz` reports. */
  readiness(): { bus: boolean; catalog: boolean };
}

const OPEN_PATHS = new Set(["/healthz"]);
/** Probes reach these by pod address, so only the token (when configured) guards them. */
const PROBE_PATHS = new Set(["/healthz", "/readyz"]);
/**
 * The console and the approvals inbox pages hold no data and send the token the API wants (the
 * console asks for it), so they load without one.
 */
const TOKEN_FREE_PATHS = new Set(["/", "/approvals"]);

export function buildHttpApp(deps: HttpAppDeps): FastifyInstance {
  const { registry, logger } = deps;
  const app = Fastify({ logger: false, bodyLimit: deps.bodyLimitBytes, return503OnClosing: true });
  // MCP messages are JSON only: any other content type is answered 415 rather than parsed.
  app.removeContentTypeParser("text/plain");
  const authorized = tokenMatcher(deps.tokens);

  app.addHook("onRequest", async (request, reply) => {
    const path = request.url.split("?")[0] ?? "";
    if (OPEN_PATHS.has(path)) return;
    if (!PROBE_PATHS.has(path)) {
      const host = checkHost(
        { host: request.headers.host, origin: request.headers.origin },
        deps.allowedHosts,
      );
      if (!host.ok) {
        logger.info(
          { host: request.headers.host, origin: request.headers.origin },
          "refused a request: host not allowed",
        );
        return reply.code(403).send(jsonRpcError(JsonRpcCode.serverError, host.message));
      }
    }
    if (
      deps.tokens.length > 0 &&
      !TOKEN_FREE_PATHS.has(path) &&
      !authorized(bearerToken(request.headers.authorization))
    ) {
      return reply
        .code(401)
        .header("www-authenticate", 'Bearer realm="toolbus"')
        .send(
          jsonRpcError(
            JsonRpcCode.serverError,
            "Unauthorized: send the header Authorization: Bearer <token> with a token from [gateway] tokens_env",
          ),
        );
    }
    return undefined;
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

  app.get("/healthz", async () => ({ status: "ok" }));
  app.get("/readyz", async (_request, reply) => {
    const state = deps.readiness();
    const ready = state.bus && state.catalog;
    return reply.code(ready ? 200 : 503).send({ status: ready ? "ready" : "not_ready", ...state });
  });

  app.all("/mcp", (request, reply) => handleMcp(request, reply, registry, logger));
  return app;
}

async function handleMcp(
  request: FastifyRequest,
  reply: FastifyReply,
  registry: SessionRegistry,
  logger: Logger,
): Promise<unknown> {
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
    const messages = jsonRpcMessages(request.body);
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
        session = await registry.create(init.params);
      } catch (error) {
        if (!(error instanceof SessionsFull)) throw error;
        logger.warn(error.message);
        return reply
          .code(503)
          .header("retry-after", "5")
          .send(jsonRpcError(JsonRpcCode.serverError, error.message));
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
    session = await registry.find(sessionId);
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

  reply.hijack();
  const raw = reply.raw;
  const finished = registry.begin(session);
  const held = session;
  raw.once("close", () => {
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

function jsonRpcMessages(body: unknown): Parsed<Array<ReturnType<typeof JSONRPCMessageSchema.parse>>> {
  const items = Array.isArray(body) ? body : [body];
  if (items.length === 0) return { ok: false, message: "Invalid Request: the batch is empty" };
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
        message: `Payload Too Large: the request body is over the gateway's limit of ${formatBytes(bodyLimitBytes)}; send a smaller request`,
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

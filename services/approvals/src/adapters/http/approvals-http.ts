/**
 * The approvals HTTP routes, as a fastify plugin the approvals service serves on its own port and
 * the gateway can mount as it is (both behind @toolbus/http-guard; each route declares its access):
 * - `GET /v1/approvals?limit&cursor` → `{pending:[ApprovalRequest], nextCursor?}` (approvers)
 * - `POST /v1/approvals/:requestId` with `{choice, grantScope?}` → `{decision}` (approvers), answered in the
 *   name of the token's principal — never a name from the body
 * - `GET /v1/approvals/events`: SSE — a `snapshot` (the first page of the pending list, with
 *   `nextCursor` when there are more), then `pending` and `resolved` events as they happen on the
 *   bus (from any replica) (approvers; one of the process's event streams)
 * - `GET /approvals`: the inbox page (no token: it holds no data)
 * Errors answer `{error:{code,message,retryable}}` with the HTTP status of the code
 * (`HTTP_STATUS_BY_CODE` in @toolbus/protocol, as every toolbus HTTP surface does).
 */
import type { ServerResponse } from "node:http";
import {
  INBOX_PAGE,
  pageHeaders,
  principalOf,
  routeAccess,
  sendSlotRefusal,
  takeStreamSlot,
} from "@toolbus/http-guard";
import {
  type ApprovalResolveRequest,
  ApprovalResolveRequestSchema,
  type ApprovalResolveResult,
  type ApprovalsListRequest,
  ApprovalsListRequestSchema,
  type ApprovalsListResult,
  type ErrorCode,
  HTTP_STATUS_BY_CODE,
  HttpRefusal,
  MAX_APPROVALS_PAGE,
  parseWith,
  RETRYABLE_BY_DEFAULT,
  requestBodyTooLarge,
  WireError,
} from "@toolbus/protocol";
import type { FastifyInstance, FastifyPluginAsync, FastifyReply } from "fastify";
import { z } from "zod";
import type { InboxEvent } from "../nats/approval-events.js";

export interface ApprovalsHttpDeps {
  list(request: ApprovalsListRequest): Promise<ApprovalsListResult>;
  resolve(request: ApprovalResolveRequest): Promise<ApprovalResolveResult>;
  /** Live pending and resolved events; returns the unsubscribe. */
  subscribe(listener: (event: InboxEvent) => void): () => void;
  /** How often an idle SSE stream sends a comment line; default 15 s. */
  keepAliveMs?: number;
}

/** `?limit=&cursor=` of `GET /v1/approvals`, as the bus request. */
const ListQuerySchema = ApprovalsListRequestSchema.extend({
  limit: z.coerce.number().pipe(ApprovalsListRequestSchema.shape.limit.unwrap()).optional(),
});

export function buildApprovalsHttp(deps: ApprovalsHttpDeps): FastifyPluginAsync {
  const inboxHeaders = pageHeaders(INBOX_PAGE);
  return async (app: FastifyInstance) => {
    const streams = new Set<ServerResponse>();

    app.setErrorHandler((error, request, reply) => {
      if (error instanceof WireError) {
        return sendError(reply, error.code, error.message, { retryable: error.retryable });
      }
      const fastifyCode = (error as { code?: unknown }).code;
      if (fastifyCode === "FST_ERR_CTP_BODY_TOO_LARGE") {
        return sendError(reply, "payload_too_large", requestBodyTooLarge(request.routeOptions.bodyLimit));
      }
      if (fastifyCode === "FST_ERR_CTP_INVALID_MEDIA_TYPE") {
        const { code, status } = HttpRefusal.unsupportedMediaType;
        return sendError(reply, code, "send the body as JSON with Content-Type: application/json", {
          status,
        });
      }
      const status = (error as { statusCode?: number }).statusCode;
      if (status !== undefined && status >= 400 && status < 500) {
        return sendError(reply, "bad_request", error instanceof Error ? error.message : String(error));
      }
      request.log.error({ err: error }, "approvals HTTP request failed");
      return sendError(
        reply,
        "internal",
        "the approvals request failed because of an internal error; see the service log",
      );
    });

    app.get<{ Querystring: unknown }>("/v1/approvals", routeAccess("approve"), (request) => {
      const query = parseWith(ListQuerySchema, request.query);
      if (!query.ok) {
        throw new WireError(
          "bad_request",
          `${query.message}; page with limit (1 to ${MAX_APPROVALS_PAGE}) and the nextCursor of the previous page`,
        );
      }
      return deps.list(query.value);
    });

    app.post<{ Params: { requestId: string }; Body: unknown }>(
      "/v1/approvals/:requestId",
      routeAccess("approve"),
      (request) => {
        const body = (typeof request.body === "object" && request.body !== null ? request.body : {}) as {
          choice?: unknown;
          grantScope?: unknown;
        };
        // The choice and whom "allow always" allows are read from the body; who answers is the
        // token's principal (only approvers and admins reach this route).
        const by = principalOf(request)?.name;
        const parsed = parseWith(ApprovalResolveRequestSchema, {
          requestId: request.params.requestId,
          choice: body.choice,
          ...(body.grantScope === undefined ? {} : { grantScope: body.grantScope }),
          ...(by !== undefined ? { by } : {}),
        });
        if (!parsed.ok)
          throw new WireError(
            "bad_request",
            `${parsed.message}; send {"choice": "allow" | "allow_session" | "allow_always" | "decline" | "cancel"}, and with allow_always optionally "grantScope": "requester" (the default) | "everyone"`,
          );
        return deps.resolve(parsed.value);
      },
    );

    app.get("/v1/approvals/events", routeAccess("approve"), async (request, reply) => {
      const slot = takeStreamSlot(request);
      if (!slot.ok) {
        request.log.info(slot.message);
        return sendSlotRefusal(reply, slot);
      }
      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache, no-transform",
        connection: "keep-alive",
        "x-accel-buffering": "no",
      });
      streams.add(raw);
      const send = (event: string, data: unknown) => {
        if (!raw.writableEnded) raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      };
      const forward = (event: InboxEvent) =>
        event.type === "pending" ? send("pending", event.request) : send("resolved", event.resolved);
      // Subscribe before reading the list, and hold events until the snapshot is out, so none is missed.
      let held: InboxEvent[] | undefined = [];
      const unsubscribe = deps.subscribe((event) => (held === undefined ? forward(event) : held.push(event)));
      const keepAlive = setInterval(() => {
        if (!raw.writableEnded) raw.write(": keep-alive\n\n");
      }, deps.keepAliveMs ?? 15_000);
      const cleanup = () => {
        slot.release();
        clearInterval(keepAlive);
        unsubscribe();
        streams.delete(raw);
      };
      raw.on("close", cleanup);
      raw.write("retry: 2000\n\n");
      try {
        send("snapshot", await deps.list({}));
      } catch (err) {
        request.log.warn({ err }, "could not list pending approvals for a new SSE stream");
        send("failure", { message: err instanceof Error ? err.message : String(err) });
      }
      for (const event of held) forward(event);
      held = undefined;
    });

    app.get("/approvals", routeAccess("page"), (_request, reply) =>
      reply.headers(inboxHeaders).send(INBOX_PAGE),
    );

    // Open SSE streams would keep the server from closing.
    app.addHook("preClose", async () => {
      for (const stream of streams) stream.end();
    });
  };
}

/** `status`: only for an `HttpRefusal`; a code is otherwise answered with its own status. */
function sendError(
  reply: FastifyReply,
  code: ErrorCode,
  message: string,
  options: { retryable?: boolean; status?: HttpRefusal["status"] } = {},
): FastifyReply {
  return reply
    .status(options.status ?? HTTP_STATUS_BY_CODE[code])
    .send({ error: { code, message, retryable: options.retryable ?? RETRYABLE_BY_DEFAULT[code] } });
}

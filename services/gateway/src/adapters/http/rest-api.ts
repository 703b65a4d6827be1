/**
 * The REST API beside `/mcp`: `GET /v1/catalog` (the catalog view, or a search with `q`),
 * `GET /v1/servers` (server summaries), `POST /v1/calls` (a ToolCallRequest through the
 * dispatcher, in the call's span, which continues a `traceparent` header: call-trace.ts) and
 * `DELETE /v1/calls/{callId}` (its caller cancels it; so does a caller that drops the
 * connection). Bodies and queries are checked with the protocol's zod schemas; every failure
 * answers `{error:{code,message,retryable}}` with the HTTP status of its wire error code.
 */
import type { Bus, Logger } from "@toolbus/bus";
import { ANONYMOUS, principalOf, routeAccess } from "@toolbus/http-guard";
import {
  CatalogExposureFilter,
  CatalogSearchResultSchema,
  CatalogServerSummarySchema,
  CatalogSnapshotSchema,
  CursorSchema,
  ERROR_CODES,
  ErrorCode,
  type ExposedNameTable,
  HTTP_STATUS_BY_CODE,
  HttpRefusal,
  IdSchema,
  MAX_SEARCH_LIMIT,
  parseWith,
  RETRYABLE_BY_DEFAULT,
  RevisionSchema,
  requestBodyTooLarge,
  ShortTextSchema,
  type Subjects,
  ToolCallRequestSchema,
  type ToolEntry,
  WireError,
} from "@toolbus/protocol";
import type { FastifyError, FastifyInstance, FastifyPluginAsync, FastifyReply } from "fastify";
import { z } from "zod";
import { clientTraceContext, withCallSpan } from "../../call-trace.js";
import { requesterOf } from "../../core/approval-authority.js";
import { type ThreadClaim, threadClaimRefusal } from "../../core/session-threads.js";
import type { ApprovalsPort, CallsPort, DispatchPort } from "../../ports.js";

export const ErrorBodySchema = z.object({
  error: z.object({ code: z.enum(ERROR_CODES), message: z.string(), retryable: z.boolean() }),
});
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

/** `GET /v1/catalog`'s query. `q` searches (the model view, best first); `limit` and `cursor` page a search. */
export const CatalogQuerySchema = z.object({
  exposure: z.enum(CatalogExposureFilter).optional(),
  q: ShortTextSchema.optional(),
  limit: z.coerce.number().int().min(1).max(MAX_SEARCH_LIMIT).optional(),
  cursor: CursorSchema.optional(),
});

/** `GET /v1/servers`. */
export const ServerListSchema = z.object({
  revision: RevisionSchema,
  servers: z.array(CatalogServerSummarySchema),
});
export type ServerList = z.infer<typeof ServerListSchema>;

/** `DELETE /v1/calls/{callId}`: the call's dispatcher was told; its own reply says how it ended. */
export const CallCancelAcceptedSchema = z.object({ callId: IdSchema, cancelled: z.literal(true) });
export type CallCancelAccepted = z.infer<typeof CallCancelAcceptedSchema>;

export interface RestApiDeps {
  bus: Pick<Bus, "request">;
  subjects: Subjects;
  dispatch: Pick<DispatchPort, "call">;
  /** Withdraws the approvals of calls still waiting when the gateway stops. */
  approvals?: Pick<ApprovalsPort, "cancel">;
  /** The calls in flight and who started them; cancels a call whose caller asks or goes away. */
  calls: CallsPort;
  /** The threads calls name: a call's must be its caller's (their session grants never cross principals). */
  threads: {
    isSession(id: string): Promise<boolean>;
    claim(threadId: string, principal: string): Promise<ThreadClaim>;
  };
  logger: Logger;
  /**
   * The gateway's exposed-name table (undefined until the catalog loaded): each listed tool gets
   * `exposedName`, the name this gateway's MCP clients see it by.
   */
  exposedNames(): Promise<ExposedNameTable | undefined>;
  /** The app's body limit, for the 413 message. */
  bodyLimitBytes: number;
  /** Bound of catalog requests; default 10 s. */
  catalogTimeoutMs?: number;
  /** How long a stopping gateway waits for REST calls in flight before it answers them 503; default 10 s. */
  stopGraceMs?: number;
}

export function restApi(deps: RestApiDeps): FastifyPluginAsync {
  const { bus, subjects, logger } = deps;

  /** A call's thread is its caller's: never an MCP session's, never another principal's. */
  async function ownThread(threadId: string, principal: string): Promise<void> {
    if (await deps.threads.isSession(threadId)) {
      throw new WireError(
        "bad_request",
        "threadId names an MCP session, whose grants are that session's; name a thread of your own, or leave threadId out",
      );
    }
    const refusal = threadClaimRefusal(await deps.threads.claim(threadId, principal), "threadId");
    if (refusal) throw new WireError(refusal.retryable ? "internal" : "bad_request", refusal.message);
  }
  /** The listing with each model-visible tool's exposed name (hidden tools have none). */
  async function named<T extends { tools: ToolEntry[] }>(listing: T): Promise<T> {
    const table = await deps.exposedNames();
    if (!table) return listing;
    const byFlatName = new Map(table.tools.map((tool) => [tool.entry.flatName, tool.exposedName]));
    const tools = listing.tools.map((tool) => {
      const exposedName = byFlatName.get(tool.flatName);
      return exposedName === undefined ? tool : { ...tool, exposedName };
    });
    return { ...listing, tools };
  }
  const timeoutMs = deps.catalogTimeoutMs ?? 10_000;
  const stopGraceMs = deps.stopGraceMs ?? 10_000;
  return async (app: FastifyInstance) => {
    const inFlight = new Set<{ callId: string; running: Promise<unknown> }>();
    let stop: (error: WireError) => void = () => undefined;
    const stopped = new Promise<never>((_, reject) => {
      stop = reject;
    });
    stopped.catch(() => undefined);
    app.setErrorHandler((error: FastifyError, _request, reply) => {
      if (error instanceof WireError) {
        if (HTTP_STATUS_BY_CODE[error.code] >= 500) logger.warn({ err: error }, "a REST request failed");
        return sendWireError(reply, error.code, error.message, error.retryable);
      }
      const failure = requestFailure(error, deps.bodyLimitBytes);
      if (failure) return sendWireError(reply, failure.code, failure.message, false, failure.status);
      logger.error({ err: error }, "a REST request failed");
      return sendWireError(reply, "internal", "the gateway failed on this request; see its log");
    });

    app.get<{ Querystring: unknown }>("/v1/catalog", routeAccess("read"), async (request) => {
      const query = parseWith(CatalogQuerySchema, request.query);
      if (!query.ok) throw new WireError("bad_request", query.message);
      const { exposure, q, limit, cursor } = query.value;
      if (q === undefined || q === "") {
        if (limit !== undefined || cursor !== undefined) {
          throw new WireError("bad_request", "limit, cursor: they page a search; give q as well");
        }
        return named(
          await bus.request(subjects.catalogGet, { exposure: exposure ?? "model" }, CatalogSnapshotSchema, {
            timeoutMs,
          }),
        );
      }
      if (exposure === "all") {
        throw new WireError(
          "bad_request",
          "exposure: a search (q) covers the model view only; drop exposure=all, or drop q and filter the full catalog",
        );
      }
      return named(
        await bus.request(
          subjects.catalogSearch,
          {
            query: q,
            ...(limit !== undefined ? { limit } : {}),
            ...(cursor !== undefined ? { cursor } : {}),
          },
          CatalogSearchResultSchema,
          { timeoutMs },
        ),
      );
    });

    app.get("/v1/servers", routeAccess("read"), async (): Promise<ServerList> => {
      const snapshot = await bus.request(subjects.catalogGet, { exposure: "model" }, CatalogSnapshotSchema, {
        timeoutMs,
      });
      return { revision: snapshot.revision, servers: snapshot.servers };
    });

    app.post("/v1/calls", routeAccess("call"), async (request, reply) => {
      const parsed = parseWith(ToolCallRequestSchema, request.body);
      if (!parsed.ok) {
        throw new WireError(
          "bad_request",
          `${parsed.message}; send a ToolCallRequest such as {"callId":"<unique id>","tool":"<flatName>","arguments":"{}"} (schema at /openapi.json)`,
        );
      }
      const principal = principalOf(request) ?? ANONYMOUS;
      const caller = principal.name;
      // Who asked is who the edge authenticated, never what the body says; and an HTTP caller
      // answers no server's question (nothing relays one to it), whatever the body says.
      const {
        requestedBy: _claimed,
        requesterName: _claimedName,
        clientCapabilities: _claimedCapabilities,
        ...asked
      } = parsed.value;
      const call = {
        ...asked,
        clientCapabilities: {},
        ...requesterOf({ principal: caller, caller: principal }),
      };
      if (call.threadId !== undefined) await ownThread(call.threadId, caller);
      const raw = reply.raw;
      const gone = () => {
        if (raw.writableFinished) return;
        logger.info({ callId: call.callId }, "the HTTP client left before its call finished; cancelling it");
        deps.calls.cancel(call.callId, "the HTTP client closed the connection before the call finished");
      };
      raw.once("close", gone);
      const finished = deps.calls.started(call.callId, caller);
      const parent = clientTraceContext({ headers: request.headers });
      const running = withCallSpan(
        { api: "rest", parent, callId: call.callId, principal: call.requestedBy },
        () => deps.dispatch.call(call),
      );
      const entry = { callId: call.callId, running };
      inFlight.add(entry);
      try {
        return await Promise.race([entry.running, stopped]);
      } finally {
        inFlight.delete(entry);
        finished();
        raw.off("close", gone);
      }
    });

    app.delete<{ Params: { callId: string } }>(
      "/v1/calls/:callId",
      routeAccess("call"),
      async (request, reply) => {
        const callId = parseWith(IdSchema, request.params.callId);
        if (!callId.ok) throw new WireError("bad_request", `callId: ${callId.message}`);
        const principal = principalOf(request) ?? ANONYMOUS;
        const callers = deps.calls.principalsOf(callId.value);
        // A caller cancels its own calls only; an admin any call running here.
        const mine = principal.role === "admin" ? callers.length > 0 : callers.includes(principal.name);
        if (!mine) {
          return sendWireError(
            reply,
            HttpRefusal.noSuchCall.code,
            `Not Found: no call ${callId.value} of yours is running on this gateway: it finished, another token started it, or it runs on another gateway replica (cancel it where you sent it)`,
            false,
            HttpRefusal.noSuchCall.status,
          );
        }
        deps.calls.cancel(
          callId.value,
          `cancelled with DELETE /v1/calls/${callId.value} by ${principal.name}`,
        );
        logger.info(
          { callId: callId.value, by: principal.name },
          "a call was cancelled through the REST API",
        );
        const accepted: CallCancelAccepted = { callId: callId.value, cancelled: true };
        return reply.code(202).send(accepted);
      },
    );

    // On stop: calls waiting for a human are withdrawn (their reply comes back at once), calls
    // running get a grace period, then whatever is left is answered 503.
    app.addHook("preClose", async () => {
      if (inFlight.size === 0) return;
      logger.info({ calls: inFlight.size }, "stopping: waiting for the REST calls in flight");
      for (const { callId } of inFlight) void deps.approvals?.cancel(callId, "the gateway is stopping");
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...inFlight].map((entry) => entry.running)),
        new Promise((resolve) => {
          timer = setTimeout(resolve, stopGraceMs);
        }),
      ]);
      clearTimeout(timer);
      stop(
        new WireError(
          "server_unavailable",
          "the gateway stopped before the call finished; the call may still complete on its server, so check its events (or the dispatcher's history) before retrying",
        ),
      );
    });
  };
}

export function sendWireError(
  reply: FastifyReply,
  code: ErrorCode,
  message: string,
  retryable?: boolean,
  status?: number,
): FastifyReply {
  const body: ErrorBody = { error: { code, message, retryable: retryable ?? RETRYABLE_BY_DEFAULT[code] } };
  return reply.code(status ?? HTTP_STATUS_BY_CODE[code]).send(body);
}

/** fastify's own refusals of a request (body, content type), as wire errors. */
function requestFailure(
  error: FastifyError,
  bodyLimitBytes: number,
): { code: ErrorCode; status: number; message: string } | undefined {
  switch (error.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return {
        code: ErrorCode.payloadTooLarge,
        status: HTTP_STATUS_BY_CODE.payload_too_large,
        message: requestBodyTooLarge(bodyLimitBytes),
      };
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return {
        ...HttpRefusal.unsupportedMediaType,
        message: "send the body as JSON with Content-Type: application/json",
      };
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return {
        code: ErrorCode.badRequest,
        status: HTTP_STATUS_BY_CODE.bad_request,
        message: "the body is empty; send a JSON object",
      };
    case "FST_ERR_CTP_INVALID_JSON_BODY":
      return {
        code: ErrorCode.badRequest,
        status: HTTP_STATUS_BY_CODE.bad_request,
        message: `the body is not valid JSON (${error.message})`,
      };
  }
  if (error instanceof SyntaxError || error.statusCode === 400) {
    return {
      code: ErrorCode.badRequest,
      status: HTTP_STATUS_BY_CODE.bad_request,
      message: `the body is not valid JSON (${error.message})`,
    };
  }
  return undefined;
}

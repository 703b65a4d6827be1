/**
 * `GET /openapi.json`: an OpenAPI 3.1 document of the gateway's HTTP surface, its schemas
 * generated from the protocol's zod schemas (`z.toJSONSchema`), so it cannot drift from what
 * the routes check. The approvals routes are listed when this gateway mounts them.
 */

import { routeAccess } from "@toolbus/http-guard";
import {
  ApprovalChoiceSchema,
  ApprovalResolveResultSchema,
  ApprovalsListResultSchema,
  CatalogSearchResultSchema,
  CatalogSnapshotSchema,
  DEFAULT_APPROVALS_PAGE,
  ERROR_CODES,
  HTTP_STATUS_BY_CODE,
  HttpRefusal,
  MAX_APPROVALS_PAGE,
  ToolCallReplySchema,
  ToolCallRequestSchema,
} from "@toolbus/protocol";
import type { FastifyInstance, FastifyPluginAsync } from "fastify";
import { z } from "zod";
import { SSE_EVENT_KINDS, SSE_EVENT_SCHEMAS, SSE_SUBSCRIBED_EVENT, type SseEventKind } from "./events-sse.js";
import {
  CallCancelAcceptedSchema,
  CatalogQuerySchema,
  ErrorBodySchema,
  ServerListSchema,
} from "./rest-api.js";

export interface OpenApiOptions {
  version: string;
  /** Bearer tokens are configured: the document declares the scheme. */
  auth: boolean;
}

type JsonObject = Record<string, unknown>;

const SCHEMA_NAME_BY_KIND: Readonly<Record<SseEventKind, string>> = {
  "call.begin": "CallBeginEvent",
  "call.end": "CallEndEvent",
  "server.status": "ServerStatusEvent",
  startup_complete: "StartupCompleteEvent",
  catalog: "CatalogEvent",
  "approvals.pending": "ApprovalRequest",
  "approvals.resolved": "ApprovalResolvedEvent",
};

const ApprovalResolveBodySchema = z.object({ choice: ApprovalChoiceSchema });
const HealthSchema = z.object({ status: z.literal("ok") });
const ReadinessSchema = z.object({
  status: z.enum(["ready", "not_ready"]),
  bus: z.boolean(),
  catalog: z.boolean(),
});
const SubscribedSchema = z.object({ kinds: z.array(z.enum(SSE_EVENT_KINDS)) });

/** The edge's own refusals (Host/Origin 403, token 401) keep the JSON-RPC shape `/mcp` clients expect. */
const EDGE_REFUSAL: JsonObject = {
  type: "object",
  properties: {
    jsonrpc: { const: "2.0" },
    id: { type: "null" },
    error: {
      type: "object",
      properties: { code: { type: "integer" }, message: { type: "string" } },
      required: ["code", "message"],
    },
  },
  required: ["jsonrpc", "id", "error"],
};

function componentSchemas(): Record<string, JsonObject> {
  const inputs = z.registry<{ id: string }>();
  // Who asked is the edge's to say (the authenticated principal), never a REST body's; nor what
  // the caller can answer (nothing, over REST).
  inputs.add(
    ToolCallRequestSchema.omit({ requestedBy: true, requesterName: true, clientCapabilities: true }),
    {
      id: "ToolCallRequest",
    },
  );
  inputs.add(ApprovalResolveBodySchema, { id: "ApprovalResolveBody" });
  const outputs = z.registry<{ id: string }>();
  outputs.add(ToolCallReplySchema, { id: "ToolCallReply" });
  outputs.add(CatalogSnapshotSchema, { id: "CatalogSnapshot" });
  outputs.add(CatalogSearchResultSchema, { id: "CatalogSearchResult" });
  outputs.add(ServerListSchema, { id: "ServerList" });
  outputs.add(CallCancelAcceptedSchema, { id: "CallCancelAccepted" });
  outputs.add(ErrorBodySchema, { id: "ErrorBody" });
  outputs.add(HealthSchema, { id: "Health" });
  outputs.add(ReadinessSchema, { id: "Readiness" });
  outputs.add(SubscribedSchema, { id: "SubscribedEvent" });
  outputs.add(ApprovalsListResultSchema, { id: "ApprovalsListResult" });
  outputs.add(ApprovalResolveResultSchema, { id: "ApprovalResolveResult" });
  for (const kind of SSE_EVENT_KINDS) {
    if (!outputs.has(SSE_EVENT_SCHEMAS[kind]))
      outputs.add(SSE_EVENT_SCHEMAS[kind], { id: SCHEMA_NAME_BY_KIND[kind] });
  }
  const uri = (id: string) => `#/components/schemas/${id}`;
  const generated = {
    ...z.toJSONSchema(inputs, { uri, io: "input", unrepresentable: "any" }).schemas,
    ...z.toJSONSchema(outputs, { uri, io: "output", unrepresentable: "any" }).schemas,
  };
  const schemas: Record<string, JsonObject> = { EdgeRefusal: EDGE_REFUSAL };
  for (const [id, schema] of Object.entries(generated)) {
    const { $schema: _dialect, $id: _id, ...rest } = schema as JsonObject;
    schemas[id] = rest;
  }
  return schemas;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: JsonObject) => ({ content: { "application/json": { schema } } });
const errors = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((status) => [String(status), { $ref: `#/components/responses/E${status}` }]),
  );

/** Every status a wire error code is answered with: what a route that relays the bus's answer may send. */
const WIRE_ERROR_STATUSES: readonly number[] = [...new Set(Object.values(HTTP_STATUS_BY_CODE))].sort(
  (a, b) => a - b,
);

/** The guard's own refusals, sent with the JSON-RPC body `/mcp` clients expect. */
const EDGE_REFUSALS: Readonly<Record<number, string>> = {
  [HTTP_STATUS_BY_CODE.unauthorized]: "no or unknown bearer token (WWW-Authenticate: Bearer)",
  [HttpRefusal.forbidden.status]:
    "Host or Origin not in [gateway] allowed_hosts, or the token's role lacks the route's access",
};

/**
 * One response per error status, generated from the protocol's tables (HTTP_STATUS_BY_CODE,
 * HttpRefusal): each names the wire codes answered with it, so the document cannot drift from
 * what the routes send.
 */
function errorResponses(): Record<string, JsonObject> {
  const causes = new Map<number, string[]>();
  const add = (status: number, cause: string) => causes.set(status, [...(causes.get(status) ?? []), cause]);
  for (const code of ERROR_CODES) add(HTTP_STATUS_BY_CODE[code], code);
  for (const [name, refusal] of Object.entries(HttpRefusal)) {
    // The guard's refusals (forbidden) come as an EdgeRefusal here, described on their own.
    if (EDGE_REFUSALS[refusal.status] === undefined) add(refusal.status, `${refusal.code} (${name})`);
  }
  const responses: Record<string, JsonObject> = {};
  for (const [status, codes] of [...causes].sort(([a], [b]) => a - b)) {
    const edge = EDGE_REFUSALS[status];
    const wire = `ErrorBody with code ${codes.join(" or ")}`;
    responses[`E${status}`] =
      edge === undefined
        ? { description: wire, ...json(ref("ErrorBody")) }
        : {
            description: `EdgeRefusal: ${edge}. ${wire}`,
            ...json({ oneOf: [ref("EdgeRefusal"), ref("ErrorBody")] }),
          };
  }
  return responses;
}

function sse(description: string, events: Record<string, JsonObject>): JsonObject {
  return {
    description,
    content: { "text/event-stream": { schema: { type: "string" } } },
    "x-sse-events": events,
  };
}

function catalogParameters(): JsonObject[] {
  const descriptions: Record<keyof typeof CatalogQuerySchema.shape, string> = {
    exposure: "`model` (default): what a model may see and call; `all`: hidden tools too. Not with `q`.",
    q: "Search the model view (`<prefix>.catalog.search`), best first; the answer is a CatalogSearchResult.",
    limit: "Results per page of a search (with `q`).",
    cursor: "`nextCursor` of the previous search page (with `q`).",
  };
  return Object.entries(CatalogQuerySchema.shape).map(([name, schema]) => {
    const { $schema: _dialect, ...generated } = z.toJSONSchema(schema.unwrap(), {
      io: "output",
    }) as JsonObject;
    return { name, in: "query", required: false, description: descriptions[name as "q"], schema: generated };
  });
}

function paths(approvals: boolean): JsonObject {
  const open = { security: [] };
  const eventSchemas = Object.fromEntries([
    [SSE_SUBSCRIBED_EVENT, ref("SubscribedEvent")],
    ...SSE_EVENT_KINDS.map((kind) => [kind, ref(SCHEMA_NAME_BY_KIND[kind])]),
  ]);
  const core: JsonObject = {
    "/v1/catalog": {
      get: {
        operationId: "getCatalog",
        summary: "The catalog (`<prefix>.catalog.get`), or a search of it with `q`",
        parameters: catalogParameters(),
        responses: {
          "200": {
            description: "A CatalogSnapshot, or a CatalogSearchResult when `q` is given",
            ...json({ oneOf: [ref("CatalogSnapshot"), ref("CatalogSearchResult")] }),
          },
          ...errors(...WIRE_ERROR_STATUSES),
        },
      },
    },
    "/v1/servers": {
      get: {
        operationId: "listServers",
        summary: "Every configured server with its status and error",
        responses: {
          "200": { description: "The servers of the current catalog", ...json(ref("ServerList")) },
          ...errors(...WIRE_ERROR_STATUSES),
        },
      },
    },
    "/v1/calls": {
      post: {
        operationId: "callTool",
        summary: "Call a tool through `<prefix>.dispatch.call` (approvals, stale checks and events apply)",
        description:
          "`callId` is required and is the caller's: make it unique (a UUID), it names the call's events and approval. " +
          '`arguments` is the JSON text of the arguments (`"{}"` or `""` for none). Any status the dispatcher ' +
          "answers with (completed, failed, skipped, invalid_arguments) is a 200; the HTTP status says only whether it answered.",
        parameters: [
          {
            name: "traceparent",
            in: "header",
            required: false,
            description:
              "W3C trace context: the call's trace (rooted at the gateway's `toolbus.gateway.call` span) continues it, under the caller's span. `tracestate` is carried along with it.",
            schema: { type: "string" },
          },
        ],
        requestBody: { required: true, ...json(ref("ToolCallRequest")) },
        responses: {
          "200": { description: "The dispatcher's reply", ...json(ref("ToolCallReply")) },
          ...errors(...WIRE_ERROR_STATUSES, HttpRefusal.unsupportedMediaType.status),
        },
      },
    },
    "/v1/calls/{callId}": {
      delete: {
        operationId: "cancelCall",
        summary: "Cancel a call this token started (an admin token: any) that still runs on this gateway",
        description:
          "A call waiting for its approval has the request withdrawn and is skipped; a running one is stopped " +
          "(its server is sent notifications/cancelled) and ends failed, saying it was cancelled. The call's own " +
          "`POST /v1/calls` answers with that reply; its end event says the same. A caller that closes the " +
          "connection of its `POST /v1/calls` cancels the call the same way.",
        parameters: [{ name: "callId", in: "path", required: true, schema: { type: "string" } }],
        responses: {
          "202": {
            description: "The call's dispatcher was told to cancel it",
            ...json(ref("CallCancelAccepted")),
          },
          "404": {
            description: "No call with this id that this token started runs on this gateway",
            ...json(ref("ErrorBody")),
          },
          ...errors(400, 401, 403),
        },
      },
    },
    "/v1/events": {
      get: {
        operationId: "streamEvents",
        summary: "Live bus events as Server-Sent Events",
        description:
          "Each event is `event: <kind>` with the JSON of its protocol schema as `data` (see `x-sse-events`); " +
          `\`${SSE_SUBSCRIBED_EVENT}\` comes first, once the subscriptions are live. Comment lines keep an idle stream ` +
          "open; a client that leaves too much unread is disconnected. With bearer tokens, send the Authorization " +
          "header (read the stream with fetch: EventSource cannot send headers).",
        parameters: [
          {
            name: "kinds",
            in: "query",
            required: false,
            description: `Comma-separated event kinds to receive (default all): ${SSE_EVENT_KINDS.join(", ")}`,
            schema: { type: "string" },
          },
        ],
        responses: {
          "200": sse("The event stream", eventSchemas),
          ...errors(400, 401, 403, HttpRefusal.tooManyStreams.status, 503),
        },
      },
    },
    "/healthz": {
      get: {
        operationId: "health",
        summary: "The process is up",
        ...open,
        responses: { "200": { description: "Up", ...json(ref("Health")) } },
      },
    },
    "/readyz": {
      get: {
        operationId: "readiness",
        summary: "Bus connected and catalog loaded",
        responses: {
          "200": { description: "Ready", ...json(ref("Readiness")) },
          "503": { description: "Not ready", ...json(ref("Readiness")) },
          ...errors(401),
        },
      },
    },
    "/openapi.json": {
      get: {
        operationId: "openApi",
        summary: "This document",
        responses: {
          "200": { description: "OpenAPI 3.1", ...json({ type: "object" }) },
          ...errors(401, 403),
        },
      },
    },
    "/": {
      get: {
        operationId: "console",
        summary: "The console page: servers, catalog, live calls, approvals",
        description: "Loads without a token (it holds no data); it asks for one when the API answers 401.",
        ...open,
        responses: {
          "200": { description: "HTML", content: { "text/html": { schema: { type: "string" } } } },
          ...errors(403),
        },
      },
    },
    "/mcp": {
      post: {
        operationId: "mcp",
        summary:
          "The MCP endpoint (streamable HTTP, JSON-RPC); also GET (notification stream) and DELETE (end session)",
        responses: {
          "200": { description: "A JSON-RPC response or an SSE stream of them" },
          ...errors(401, 403),
        },
      },
    },
  };
  if (!approvals) return core;
  return {
    ...core,
    "/v1/approvals": {
      get: {
        operationId: "listApprovals",
        summary: "Tool calls waiting for a human, a page at a time (approver or admin token)",
        parameters: [
          {
            name: "limit",
            in: "query",
            required: false,
            description: `Requests per page (default ${DEFAULT_APPROVALS_PAGE}).`,
            schema: { type: "integer", minimum: 1, maximum: MAX_APPROVALS_PAGE },
          },
          {
            name: "cursor",
            in: "query",
            required: false,
            description: "`nextCursor` of the previous page.",
            schema: { type: "string" },
          },
        ],
        responses: {
          "200": { description: "The pending requests", ...json(ref("ApprovalsListResult")) },
          ...errors(...WIRE_ERROR_STATUSES),
        },
      },
    },
    "/v1/approvals/{requestId}": {
      post: {
        operationId: "resolveApproval",
        summary:
          "Answer a pending approval request, in the name of the token's principal (approver or admin token)",
        parameters: [{ name: "requestId", in: "path", required: true, schema: { type: "string" } }],
        requestBody: { required: true, ...json(ref("ApprovalResolveBody")) },
        responses: {
          "200": { description: "The decision", ...json(ref("ApprovalResolveResult")) },
          ...errors(...WIRE_ERROR_STATUSES, HttpRefusal.unsupportedMediaType.status),
        },
      },
    },
    "/v1/approvals/events": {
      get: {
        operationId: "streamApprovals",
        summary: "The inbox live: a snapshot, then pending and resolved events",
        responses: {
          "200": sse("The inbox stream", {
            snapshot: ref("ApprovalsListResult"),
            pending: ref("ApprovalRequest"),
            resolved: ref("ApprovalResolvedEvent"),
          }),
          ...errors(401, 403, HttpRefusal.tooManyStreams.status, 503),
        },
      },
    },
    "/approvals": {
      get: {
        operationId: "approvalsInbox",
        summary: "The approvals inbox page",
        responses: {
          "200": { description: "HTML", content: { "text/html": { schema: { type: "string" } } } },
          ...errors(401, 403),
        },
      },
    },
  };
}

export function openApiDocument(options: OpenApiOptions & { approvals: boolean }): JsonObject {
  return {
    openapi: "3.1.0",
    info: {
      title: "toolbus gateway",
      version: options.version,
      description:
        "REST, SSE and MCP in front of the toolbus catalog and dispatcher. Errors of the REST routes are " +
        "`{error:{code,message,retryable}}` with a wire error code from @toolbus/protocol.",
    },
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    paths: paths(options.approvals),
    components: {
      schemas: componentSchemas(),
      responses: errorResponses(),
      ...(options.auth ? { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } } : {}),
    },
    ...(options.auth ? { security: [{ bearer: [] }] } : {}),
  };
}

export function openApi(options: OpenApiOptions): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    const documents = new Map<boolean, string>();
    app.get("/openapi.json", routeAccess("read"), async (_request, reply) => {
      const approvals = app.hasRoute({ method: "GET", url: "/v1/approvals" });
      let document = documents.get(approvals);
      if (document === undefined) {
        document = JSON.stringify(openApiDocument({ ...options, approvals }));
        documents.set(approvals, document);
      }
      return reply.type("application/json; charset=utf-8").send(document);
    });
  };
}

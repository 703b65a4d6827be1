/**
 * `GET /v1/events`: what happens on the bus as Server-Sent Events — call begin/end, server
 * status, startup and catalog events, approvals pending/resolved — each validated against its
 * protocol schema and sent as `event: <kind>` with JSON data. One set of NATS subscriptions for
 * every client of the process (taken with the first client, dropped with the last), keep-alive
 * comments, and a bound on what a client may leave unread: past it the client is dropped. A
 * caller sees its own calls only (core/event-visibility.ts).
 */
import type { ServerResponse } from "node:http";
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import type { Logger } from "@toolbus/bus";
import { ANONYMOUS, principalOf, routeAccess, sendSlotRefusal, takeStreamSlot } from "@toolbus/http-guard";
import {
  ApprovalRequestSchema,
  ApprovalResolvedEventSchema,
  CallBeginEventSchema,
  CallEndEventSchema,
  CatalogEventSchema,
  type Principal,
  ServerStatusEventSchema,
  StartupCompleteEventSchema,
  type Subjects,
} from "@toolbus/protocol";
import type { FastifyInstance, FastifyPluginAsync } from "fastify";
import type { z } from "zod";
import { eventVisibleTo } from "../../core/event-visibility.js";
import { sendWireError } from "./rest-api.js";

/** The `event:` names of the stream, with the schema of each one's data. */
export const SSE_EVENT_SCHEMAS = {
  "call.begin": CallBeginEventSchema,
  "call.end": CallEndEventSchema,
  "server.status": ServerStatusEventSchema,
  startup_complete: StartupCompleteEventSchema,
  catalog: CatalogEventSchema,
  "approvals.pending": ApprovalRequestSchema,
  "approvals.resolved": ApprovalResolvedEventSchema,
} as const satisfies Record<string, z.ZodType>;
export type SseEventKind = keyof typeof SSE_EVENT_SCHEMAS;
export const SSE_EVENT_KINDS = Object.keys(SSE_EVENT_SCHEMAS) as SseEventKind[];

/** Sent first, once the subscriptions are live on the server: nothing published after it is missed. */
export const SSE_SUBSCRIBED_EVENT = "subscribed";

function subjectOf(kind: SseEventKind, subjects: Subjects): string {
  switch (kind) {
    case "call.begin":
      return subjects.callBegin;
    case "call.end":
      return subjects.callEnd;
    case "server.status":
      return subjects.serverStatusAll;
    case "startup_complete":
      return subjects.startupComplete;
    case "catalog":
      return subjects.catalogEvent;
    case "approvals.pending":
      return subjects.approvalsPending;
    case "approvals.resolved":
      return subjects.approvalsResolved;
  }
}

export interface EventsSseDeps {
  nc: NatsConnection;
  subjects: Subjects;
  logger: Logger;
  /** How often an idle stream gets a comment line; default 15 s. */
  keepAliveMs?: number;
  /** Bytes a client may leave unread (in the process and the socket) before it is dropped; default 8 MiB. */
  maxBufferedBytes?: number;
}

interface Client {
  raw: ServerResponse;
  kinds: ReadonlySet<SseEventKind>;
  /** Who reads it: a caller sees its own calls only (core/event-visibility.ts). */
  viewer: Principal;
}

export function eventsSse(deps: EventsSseDeps): FastifyPluginAsync {
  const keepAliveMs = deps.keepAliveMs ?? 15_000;
  const maxBufferedBytes = deps.maxBufferedBytes ?? 8 * 1024 * 1024;
  const { logger } = deps;
  return async (app: FastifyInstance) => {
    const clients = new Set<Client>();
    let subscriptions: Subscription[] = [];
    let keepAlive: NodeJS.Timeout | undefined;

    const drop = (client: Client, reason: string) => {
      if (!clients.delete(client)) return;
      logger.warn({ buffered: client.raw.writableLength }, `dropped an SSE client of /v1/events: ${reason}`);
      client.raw.destroy();
      if (clients.size === 0) stopListening();
    };
    const write = (client: Client, frame: string) => {
      if (client.raw.writableEnded || client.raw.destroyed) return;
      // Measured before the write, so one large event alone never drops a client that reads.
      if (client.raw.writableLength > maxBufferedBytes) {
        drop(client, `it left more than ${maxBufferedBytes} bytes unread`);
        return;
      }
      client.raw.write(frame);
    };
    const broadcast = (kind: SseEventKind, data: object) => {
      const frame = `event: ${kind}\ndata: ${JSON.stringify(data)}\n\n`;
      for (const client of [...clients]) {
        if (client.kinds.has(kind) && eventVisibleTo(kind, data, client.viewer)) write(client, frame);
      }
    };

    const startListening = () => {
      subscriptions = SSE_EVENT_KINDS.map((kind) =>
        deps.nc.subscribe(subjectOf(kind, deps.subjects), {
          callback: (error, msg) => {
            if (error) return;
            const parsed = SSE_EVENT_SCHEMAS[kind].safeParse(safeJson(msg.string()));
            if (parsed.success) broadcast(kind, parsed.data);
            else logger.warn({ subject: msg.subject }, "ignored an event that does not match the contract");
          },
        }),
      );
      keepAlive = setInterval(() => {
        for (const client of [...clients]) write(client, ": keep-alive\n\n");
      }, keepAliveMs);
      keepAlive.unref();
    };
    const stopListening = () => {
      for (const subscription of subscriptions) subscription.unsubscribe();
      subscriptions = [];
      clearInterval(keepAlive);
      keepAlive = undefined;
    };

    app.get<{ Querystring: { kinds?: unknown } }>(
      "/v1/events",
      routeAccess("read"),
      async (request, reply) => {
        const kinds = parseKinds(request.query.kinds);
        if (!kinds.ok) return sendWireError(reply, "bad_request", kinds.message);
        const slot = takeStreamSlot(request);
        if (!slot.ok) {
          logger.info(slot.message);
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
        raw.write("retry: 2000\n\n");
        const client: Client = { raw, kinds: kinds.value, viewer: principalOf(request) ?? ANONYMOUS };
        if (clients.size === 0) startListening();
        clients.add(client);
        raw.once("close", () => {
          slot.release();
          if (clients.delete(client) && clients.size === 0) stopListening();
        });
        try {
          // The subscriptions have reached the server once a round trip has.
          await deps.nc.flush();
        } catch (err) {
          logger.warn({ err }, "the bus did not confirm the /v1/events subscriptions");
        }
        write(
          client,
          `event: ${SSE_SUBSCRIBED_EVENT}\ndata: ${JSON.stringify({ kinds: [...kinds.value] })}\n\n`,
        );
        return reply;
      },
    );

    // Open streams would keep the server from closing.
    app.addHook("preClose", async () => {
      for (const client of clients) client.raw.end();
      clients.clear();
      stopListening();
    });
  };
}

type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

/** `?kinds=call.begin,call.end` (absent: every kind). */
function parseKinds(value: unknown): Parsed<ReadonlySet<SseEventKind>> {
  if (value === undefined || value === "") return { ok: true, value: new Set(SSE_EVENT_KINDS) };
  if (typeof value !== "string") {
    return { ok: false, message: "kinds: give it once, as a comma-separated list" };
  }
  const known = new Set<string>(SSE_EVENT_KINDS);
  const names = value.split(",").map((name) => name.trim());
  const unknown = names.filter((name) => !known.has(name));
  if (unknown.length > 0) {
    return {
      ok: false,
      message: `kinds: unknown event kind(s) ${unknown.map((name) => JSON.stringify(name)).join(", ")}; use a comma-separated list of ${SSE_EVENT_KINDS.join(", ")}`,
    };
  }
  return { ok: true, value: new Set(names as SseEventKind[]) };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Answering one request on a served endpoint: trace context from the headers, a span named
 * after the endpoint, the body decoded against the endpoint's schema, the handler run, and
 * exactly one envelope sent back whatever happens (docs/contract.md "Conventions").
 */

import type { Msg, MsgHdrs } from "@nats-io/transport-node";
import { headers as natsHeaders, nuid } from "@nats-io/transport-node";
import { ROOT_CONTEXT, type Span, SpanKind } from "@opentelemetry/api";
import { busReplyTooLarge, type Envelope, errorEnvelope, okEnvelope, senderOf } from "@toolbus/protocol";
import type { Logger } from "pino";
import type { z } from "zod";
import { AttributeCache } from "./core/attribute-cache.js";
import { decodeRequest } from "./core/decode-request.js";
import { failureOf } from "./core/failure.js";
import {
  formatStoredReply,
  LARGE_REPLY_HEADER,
  readerOf,
  type StoredReply,
  storedReplySubject,
} from "./core/large-reply.js";
import type { LargeReplies, LargeReplyOptions } from "./large-replies.js";
import { LARGE_REPLY_HOLDS, LargeRepliesBudgetError, LargeReplyHold } from "./large-reply-budget.js";
import type { BusInstruments } from "./metrics.js";
import type { Outcome } from "./micro-service.js";
import { permissionViolation, unauthorized } from "./request.js";
import { extractTraceContext, markFailed, withSpan } from "./tracing.js";

export interface EndpointSpec<S extends z.ZodType = z.ZodType> {
  /** The subject served, e.g. `toolbus.catalog.get` (prefix included). */
  subject: string;
  /** The micro-service endpoint name (`$SRV.INFO` lists it): letters, digits, `-`, `_`. */
  name: string;
  /** The request body's schema; a body it rejects is answered `bad_request`. */
  request: S;
  /** Queue group; default the service name, so replicas share the load. */
  queue?: string;
  metadata?: Record<string, string>;
  /** The handler span's name; default `<service>.<name>`. */
  spanName?: string;
  /**
   * Where a reply larger than NATS `max_payload` is stored for its caller (see `large-replies.ts`);
   * without it such a reply is answered `payload_too_large`.
   */
  largeReplies?: LargeReplyOptions;
  /**
   * Also served as `<subject>.<sender>`, the way an enforcing bus delivers a subject whose requests
   * may name a principal (`PRINCIPAL_FIELDS`); the handler learns the sender (`ctx.sender`).
   */
  taggedBySender?: boolean;
}

/** What became of a request's reply, once it was sent (`HandlerContext.sent`). */
export interface SentReply {
  /** Where it was stored, when it was too large for one message. */
  stored?: StoredReply;
}

/**
 * A handler's answer that is a reply stored before (`StoredReply`, e.g. from a call ledger):
 * sent again as the small reply that names it, for the same recipient role to read.
 */
export class StoredReplyAnswer {
  constructor(readonly reply: StoredReply) {}
}

export interface HandlerContext {
  /** A child of the service logger with `{subject, callId?}`. */
  logger: Logger;
  headers: MsgHdrs | undefined;
  /** The span the handler runs in (active, so child spans nest under it). */
  span: Span;
  /** Aborted when the bus closes before the handler finished (shutdown grace exceeded). */
  signal: AbortSignal;
  subject: string;
  /**
   * The identity that sent the request, on an endpoint `taggedBySender` that an enforcing bus
   * delivered tagged; undefined on an open bus.
   */
  sender?: string;
  callId?: string;
  /**
   * Resolves once the reply was sent (or could not be), saying where it was stored when it was
   * too large for one message: a call ledger records that instead of the reply itself.
   */
  sent: Promise<SentReply>;
}

export type Handler<Req, Res> = (request: Req, ctx: HandlerContext) => Promise<Res>;

export interface EndpointDeps {
  service: string;
  logger: Logger;
  signal: AbortSignal;
  maxPayload: () => number;
  /** `toolbus.bus.requests` and `toolbus.bus.request.duration` (no-ops when nothing is exported). */
  metrics: BusInstruments;
  /** Stores replies of endpoints with `largeReplies`. */
  largeReplies?: Pick<LargeReplies, "reserve" | "store">;
}

/**
 * The message callback of one endpoint; it never rejects and always answers a request. It
 * resolves to the error it answered with, if any, for the endpoint's stats.
 */
export function endpointCallback<S extends z.ZodType, Res>(
  deps: EndpointDeps,
  spec: EndpointSpec<S>,
  handler: Handler<z.output<S>, Res>,
): (msg: Msg) => Promise<Outcome> {
  const spanName = spec.spanName ?? `${deps.service}.${spec.name}`;
  const attributes = {
    "messaging.system": "nats",
    "messaging.destination.name": spec.subject,
    "toolbus.endpoint": spec.name,
  };
  // One attribute object per outcome (`ok` or an error code), reused for every request.
  const outcomes = new AttributeCache((outcome: string) => ({
    "messaging.destination.name": spec.subject,
    "toolbus.outcome": outcome,
  }));
  const record = (started: number, outcome: string) => {
    const point = outcomes.get(outcome);
    deps.metrics.requests.add(1, point);
    deps.metrics.requestDuration.record((performance.now() - started) / 1000, point);
  };
  return (msg) =>
    withSpan(
      spanName,
      attributes,
      async (span) => {
        const started = performance.now();
        const decoded = decodeRequest(spec.request, msg.string());
        const sender = spec.taggedBySender ? senderOf(spec.subject, msg.subject) : undefined;
        if (decoded.callId !== undefined) span.setAttribute("mcp.call_id", decoded.callId);
        const logger = deps.logger.child({
          subject: msg.subject,
          ...(decoded.callId === undefined ? {} : { callId: decoded.callId }),
        });
        let sent: (reply: SentReply) => void = () => undefined;
        const sentPromise = new Promise<SentReply>((resolve) => {
          sent = resolve;
        });
        // Large replies the handler reads are held against the budget until it has answered.
        const hold = new LargeReplyHold();
        const reply = async (envelope: Envelope<unknown> | StoredReplyAnswer) => {
          const outcome =
            envelope instanceof StoredReplyAnswer
              ? await respondStored(msg, envelope.reply, deps, spec, logger)
              : await respond(msg, envelope, deps, spec, logger, span, hold);
          hold.release();
          sent(outcome.sent);
          return outcome.replacedBy;
        };
        if (!decoded.ok) {
          span.setAttribute("toolbus.error.code", "bad_request");
          logger.info({ code: "bad_request" }, `rejected request: ${decoded.message}`);
          record(started, (await reply(errorEnvelope("bad_request", decoded.message))) ?? "bad_request");
          return { error: `bad_request: ${decoded.message}` };
        }
        try {
          const ctx: HandlerContext = {
            logger,
            headers: msg.headers,
            span,
            signal: deps.signal,
            subject: msg.subject,
            ...(sender === undefined ? {} : { sender }),
            ...(decoded.callId === undefined ? {} : { callId: decoded.callId }),
            sent: sentPromise,
          };
          const result: unknown = await LARGE_REPLY_HOLDS.run(hold, () => handler(decoded.value, ctx));
          record(
            started,
            (await reply(result instanceof StoredReplyAnswer ? result : okEnvelope(result))) ?? "ok",
          );
          logger.debug({ durationMs: elapsed(started) }, `answered ${spec.name}`);
          return {};
        } catch (err) {
          const errorId = nuid.next();
          // NATS refused something this service's identity tried: say so, not "internal".
          const refused = permissionViolation(err);
          const failure = failureOf(refused ? unauthorized(refused, err) : err, {
            service: deps.service,
            endpoint: spec.name,
            errorId,
          });
          const { code, message } = failure.envelope.ok ? { code: "", message: "" } : failure.envelope.error;
          span.setAttribute("toolbus.error.code", code);
          if (failure.unexpected) {
            markFailed(span, err);
            logger.error({ err, errorId, code, durationMs: elapsed(started) }, `${spec.name} handler threw`);
          } else {
            // What made it so (e.g. the JetStream error behind `server_unavailable`), for the operator.
            const cause = err instanceof Error && err.cause instanceof Error ? err.cause : undefined;
            logger[failure.level](
              {
                code,
                durationMs: elapsed(started),
                ...(cause ? { cause: `${cause.name}: ${cause.message}` } : {}),
              },
              `answered ${code}: ${message}`,
            );
          }
          record(started, (await reply(failure.envelope)) ?? code);
          return { error: `${code}: ${message}` };
        }
      },
      // Root, not active: the subscription callback may run inside an unrelated context.
      { kind: SpanKind.SERVER, parent: extractTraceContext(msg.headers, ROOT_CONTEXT) },
    );
}

/** What `respond` did: the error code sent instead of the envelope, if any, and where it was stored. */
interface Responded {
  replacedBy?: string;
  sent: SentReply;
}

/**
 * Sends the envelope; says which error code was sent instead when it could not be sent as it
 * was. One larger than max_payload goes to the large-replies stream when the endpoint has one.
 */
async function respond(
  msg: Msg,
  envelope: Envelope<unknown>,
  deps: EndpointDeps,
  spec: EndpointSpec,
  logger: Logger,
  span: Span,
  hold: LargeReplyHold,
): Promise<Responded> {
  if (!msg.reply) return { sent: {} };
  let replacedBy: string | undefined;
  let payload: string;
  let headers: MsgHdrs | undefined;
  let stored: StoredReply | undefined;
  try {
    payload = JSON.stringify(envelope);
  } catch (err) {
    const errorId = nuid.next();
    logger.error({ err, errorId }, `${spec.name} returned a result that cannot be serialized as JSON`);
    const failure = failureOf(err, { service: deps.service, endpoint: spec.name, errorId }).envelope;
    replacedBy = failure.ok ? undefined : failure.error.code;
    payload = JSON.stringify(failure);
  }
  const bytes = Buffer.byteLength(payload);
  const limit = deps.maxPayload();
  if (bytes > limit) {
    // Handed over, not kept here: a reply that waits for room lets go of its text meanwhile.
    const text: LargeText = { value: payload, envelope };
    payload = "";
    const outcome = await storeLarge(text, readerOf(msg.headers), bytes, limit, deps, spec, logger, hold);
    if (outcome.ok) {
      stored = outcome.stored;
      span.setAttribute("toolbus.reply.stored_bytes", bytes);
      headers = natsHeaders();
      headers.set(LARGE_REPLY_HEADER, formatStoredReply(stored));
    } else {
      replacedBy = "payload_too_large";
    }
    payload = JSON.stringify(errorEnvelope("payload_too_large", outcome.message));
  }
  send(msg, payload, headers, spec, logger);
  return { ...(replacedBy === undefined ? {} : { replacedBy }), sent: stored ? { stored } : {} };
}

/** A large reply's text, dropped while it waits for room and made again from its envelope. */
interface LargeText {
  value: string | undefined;
  envelope: Envelope<unknown>;
}

/** Sends a reply stored before (a call ledger's) as the small reply that names it. */
async function respondStored(
  msg: Msg,
  stored: StoredReply,
  deps: EndpointDeps,
  spec: EndpointSpec,
  logger: Logger,
): Promise<Responded> {
  if (!msg.reply) return { sent: {} };
  const recipient = spec.largeReplies ? readerOf(msg.headers) : undefined;
  if (!spec.largeReplies || recipient !== stored.recipient) {
    const message =
      `the reply to this call (${stored.bytes} bytes) was stored for ${stored.recipient}` +
      (recipient === undefined ? "" : `, and this request came from ${recipient}`) +
      "; ask again as that identity, or call again with a new callId";
    logger.info({ code: "payload_too_large" }, message);
    send(msg, JSON.stringify(errorEnvelope("payload_too_large", message)), undefined, spec, logger);
    return { replacedBy: "payload_too_large", sent: {} };
  }
  const headers = natsHeaders();
  headers.set(LARGE_REPLY_HEADER, formatStoredReply(stored));
  const message = storedMessage(spec.name, stored.bytes, deps.maxPayload(), spec.largeReplies, stored);
  send(msg, JSON.stringify(errorEnvelope("payload_too_large", message)), headers, spec, logger);
  return { sent: { stored } };
}

function send(msg: Msg, payload: string, headers: MsgHdrs | undefined, spec: EndpointSpec, logger: Logger) {
  try {
    msg.respond(payload, headers ? { headers } : undefined);
  } catch (err) {
    logger.error({ err }, `could not send the reply of ${spec.name}; the caller will time out`);
  }
}

function storedMessage(
  endpoint: string,
  bytes: number,
  limit: number,
  options: LargeReplyOptions,
  stored: StoredReply,
): string {
  return busReplyTooLarge({
    endpoint,
    bytes,
    limit,
    stored: {
      stream: options.stream,
      subject: storedReplySubject(stored),
      ttlSec: Math.round(options.ttlMs / 1000),
      header: LARGE_REPLY_HEADER,
    },
  });
}

/** Stores an oversized reply for its caller; says why not (logged) when it cannot. */
async function storeLarge(
  text: LargeText,
  /** Who reads it: the reader the request names. */
  recipient: string,
  bytes: number,
  limit: number,
  deps: EndpointDeps,
  spec: EndpointSpec,
  logger: Logger,
  hold: LargeReplyHold,
): Promise<{ ok: true; stored: StoredReply; message: string } | { ok: false; message: string }> {
  const facts = { endpoint: spec.name, bytes, limit };
  if (!spec.largeReplies || !deps.largeReplies) {
    const message = busReplyTooLarge(facts);
    logger.warn({ code: "payload_too_large", bytes, limit }, message);
    return { ok: false, message };
  }
  const options = spec.largeReplies;
  let release: (() => void) | undefined;
  try {
    const reservation = deps.largeReplies.reserve(bytes, hold);
    if ("release" in reservation) {
      release = reservation.release;
    } else {
      text.value = undefined;
      release = await reservation.wait();
      // Serialized once already, so this cannot throw.
      text.value = JSON.stringify(text.envelope);
    }
    const stored = await deps.largeReplies.store(options, text.value as string, recipient);
    text.value = undefined;
    logger.debug({ bytes, limit, id: stored.id }, `stored the reply of ${spec.name} in ${options.stream}`);
    return { ok: true, stored, message: storedMessage(spec.name, bytes, limit, options, stored) };
  } catch (err) {
    const failure = storeFailure(err, options);
    const message = busReplyTooLarge({ ...facts, stored: { stream: options.stream, failure } });
    // The budget's refusal is the process protecting its memory, not a fault.
    if (err instanceof LargeRepliesBudgetError)
      logger.warn({ code: "payload_too_large", bytes, limit }, message);
    else logger.error({ err, code: "payload_too_large", bytes, limit }, message);
    return { ok: false, message };
  } finally {
    release?.();
  }
}

/** Why a reply could not be stored, with what to change when that is known. */
function storeFailure(err: unknown, options: LargeReplyOptions): string {
  const reason = err instanceof Error ? err.message : String(err);
  if (/maximum bytes|insufficient resources/i.test(reason)) {
    return `the stream is full (${reason}): it keeps [bus] large_replies_max_bytes = ${options.maxBytes} bytes of replies for [bus] large_reply_ttl_sec; raise the first, lower the second, or retry later`;
  }
  return reason;
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 1000) / 1000;
}

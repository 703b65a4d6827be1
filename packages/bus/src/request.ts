/**
 * Calling an endpoint: the active trace context goes out in the headers, the reply envelope is
 * validated, and every way a call can fail comes back as a `WireError` with a code from the
 * closed set.
 */
import {
  type Msg,
  type MsgHdrs,
  NoRespondersError,
  PermissionViolationError,
  RequestError,
  TimeoutError,
} from "@nats-io/transport-node";
import {
  busRequestTooLarge,
  type Envelope,
  envelopeSchema,
  formatZodIssues,
  WireError,
} from "@toolbus/protocol";
import type { z } from "zod";
import { LARGE_REPLY_HEADER, READER_HEADER } from "./core/large-reply.js";
import type { LargeReplies } from "./large-replies.js";
import { LargeRepliesBudgetError } from "./large-reply-budget.js";
import type { ReplyInbox } from "./reply-inbox.js";
import { injectTraceContext } from "./tracing.js";

export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

export interface RequestOptions {
  /** Default 10 s. */
  timeoutMs?: number;
  /** Extra headers; the trace context is added to them. */
  headers?: MsgHdrs;
  /** Told when the reply arrived, before a large one it names is read (see `watchedRequest`). */
  onReply?: () => void;
}

export async function requestReply<S extends z.ZodType>(
  inbox: ReplyInbox,
  subject: string,
  body: unknown,
  resultSchema: S,
  options: RequestOptions = {},
  largeReplies?: Pick<LargeReplies, "read" | "reader">,
): Promise<z.output<S>> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const headers = injectTraceContext(options.headers);
  // A reply too large for one message is stored for the reader this names: this identity.
  if (largeReplies) headers.set(READER_HEADER, largeReplies.reader);
  const payload = JSON.stringify(body);
  let reply: Msg;
  try {
    reply = await inbox.request(subject, payload, { timeoutMs, headers });
  } catch (err) {
    throw requestFailure(err, subject, timeoutMs, () => ({
      bytes: Buffer.byteLength(payload),
      limit: inbox.maxPayload,
    }));
  }
  options.onReply?.();
  // A reply too large for one message waits in the large-replies stream: read it in its place.
  const stored = largeReplies ? reply.headers?.get(LARGE_REPLY_HEADER) : undefined;
  let text: string;
  if (stored && largeReplies) {
    try {
      text = await largeReplies.read(stored);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      const code = err instanceof LargeRepliesBudgetError ? "payload_too_large" : "transport_error";
      throw new WireError(
        code,
        `the reply on ${subject} was too large for one NATS message and was stored (${stored.slice(0, stored.indexOf(";"))}), but it could not be read: ${why}`,
        { cause: err, retryable: false },
      );
    }
  } else {
    text = reply.string();
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new WireError(
      "internal",
      `the reply on ${subject} is not JSON; the service that answered is faulty`,
      {
        retryable: false,
      },
    );
  }
  const parsed = envelopeFor(resultSchema).safeParse(json);
  if (!parsed.success) {
    throw new WireError(
      "internal",
      `the reply on ${subject} does not match the contract (${formatZodIssues(parsed.error)}); the service and its caller disagree on the schema`,
      { retryable: false },
    );
  }
  const envelope = parsed.data as Envelope<z.output<S>>;
  if (!envelope.ok) {
    throw new WireError(envelope.error.code, envelope.error.message, { retryable: envelope.error.retryable });
  }
  return envelope.result;
}

function requestFailure(
  err: unknown,
  subject: string,
  timeoutMs: number,
  size: () => { bytes: number; limit: number | undefined },
): WireError {
  const refused = permissionViolation(err);
  if (refused) return unauthorized(refused, err);
  if (err instanceof NoRespondersError || (err instanceof RequestError && err.isNoResponders())) {
    return new WireError(
      "server_unavailable",
      `no service answers on ${subject}; start the service that serves it (or check TOOLBUS_PREFIX)`,
      { cause: err },
    );
  }
  if (err instanceof TimeoutError || (err instanceof Error && err.cause instanceof TimeoutError)) {
    return new WireError("timeout", `no reply on ${subject} within ${timeoutMs} ms`, { cause: err });
  }
  if (isOverMaxPayload(err)) {
    const { bytes, limit } = size();
    return new WireError(
      "payload_too_large",
      busRequestTooLarge({ subject, bytes, ...(limit === undefined ? {} : { limit }) }),
      { cause: err },
    );
  }
  const reason = err instanceof Error ? err.message : String(err);
  return new WireError("transport_error", `request on ${subject} failed: ${reason}`, { cause: err });
}

/** nats.js's refusal to publish a message larger than the server's max_payload. */
export function isOverMaxPayload(err: unknown): boolean {
  return err instanceof Error && /max_payload/.test(err.message);
}

/** The server's refusal behind an error, if that is what it is (nats.js wraps it for requests). */
export function permissionViolation(err: unknown): PermissionViolationError | undefined {
  if (err instanceof PermissionViolationError) return err;
  if (err instanceof Error && err.cause instanceof PermissionViolationError) return err.cause;
  return undefined;
}

/** `unauthorized`, naming what this identity may not do and how to change that. */
export function unauthorized(refused: PermissionViolationError, cause: unknown): WireError {
  const what = refused.operation === "subscription" ? "subscribe to" : "publish to";
  return new WireError(
    "unauthorized",
    `the NATS server does not let this identity ${what} ${refused.subject}; its role's permissions (toolbus nats-config) do not include it`,
    { retryable: false, cause },
  );
}

/** Building a zod schema costs far more than using one, so each result schema's envelope is built once. */
const envelopes = new WeakMap<z.ZodType, z.ZodType>();
function envelopeFor(resultSchema: z.ZodType): z.ZodType {
  let envelope = envelopes.get(resultSchema);
  if (!envelope) {
    envelope = envelopeSchema(resultSchema);
    envelopes.set(resultSchema, envelope);
  }
  return envelope;
}

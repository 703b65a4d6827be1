/**
 * Decoding one request body: bytes of text → JSON → the endpoint's zod schema. A failure is
 * a value whose message names the bad field, ready to be answered as `bad_request`.
 */
import { parseWith } from "@toolbus/protocol";
import type { z } from "zod";

export type DecodedRequest<T> =
  | { ok: true; value: T; callId?: string }
  | { ok: false; message: string; callId?: string };

/**
 * An empty body counts as `{}` so that requests whose fields are all optional can be sent
 * without one (`nats req toolbus.catalog.get ''`); the schema still rejects missing fields.
 */
export function decodeRequest<S extends z.ZodType>(schema: S, text: string): DecodedRequest<z.output<S>> {
  let body: unknown;
  if (text.trim() === "") {
    body = {};
  } else {
    try {
      body = JSON.parse(text);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      return { ok: false, message: `request body is not valid JSON (${reason}); send one JSON object` };
    }
  }
  const callId = callIdOf(body);
  const parsed = parseWith(schema, body);
  const withCallId = callId === undefined ? {} : { callId };
  return parsed.ok
    ? { ok: true, value: parsed.value, ...withCallId }
    : { ok: false, message: parsed.message, ...withCallId };
}

/** The body's `callId` when it has a usable one, so logs can name the call even when the body is rejected. */
export function callIdOf(body: unknown): string | undefined {
  if (typeof body !== "object" || body === null || !("callId" in body)) return undefined;
  const callId = (body as { callId: unknown }).callId;
  return typeof callId === "string" && callId !== "" ? callId : undefined;
}

/**
 * The building blocks every message schema shares: identifiers, server names, size caps,
 * timestamps and JSON values. A value over a cap fails validation with a message that names
 * the field, so an oversize request is a clean `bad_request`, never a crash downstream.
 */
import { z } from "zod";

/** Longest id (callId, threadId, turnId, messageId, rolloutId) accepted on the bus. */
export const MAX_ID_LENGTH = 256;
/** Longest MCP server name; names must also match {@link SERVER_NAME_PATTERN}. */
export const MAX_SERVER_NAME_LENGTH = 128;
/**
 * The server-name rule from the reference (`[mcp_servers.<name>]`), the only place it is spelled
 * out (test/lint/one-source.test.ts): a name is one subject token, KV key token and path segment.
 */
export const SERVER_NAME_PATTERN = /^[a-zA-Z0-9_-]+$/;
/** Longest tool, namespace or hook name a request may carry. */
export const MAX_NAME_LENGTH = 1024;
/** Longest pagination cursor (the reference's limit, 65,536 bytes). */
export const MAX_CURSOR_BYTES = 65_536;
/** Longest raw argument text of one tool call (8 MiB). */
export const MAX_ARGUMENTS_BYTES = 8 * 1024 * 1024;
/** Longest assistant message handed to the memory service (16 MiB). */
export const MAX_MEMORY_TEXT_BYTES = 16 * 1024 * 1024;
/** Longest resource URI a request may name. */
export const MAX_URI_LENGTH = 65_536;
/** Longest short free text a request may carry: search queries, cancel reasons. */
export const MAX_SHORT_TEXT_BYTES = 64 * 1024;

/** UTF-8 length of a string without encoding it (lone surrogates count as U+FFFD, 3 bytes). */
export function utf8ByteLength(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/** A string of at most `maxBytes` UTF-8 bytes. */
export function cappedString(maxBytes: number) {
  // A UTF-16 unit is never more than 3 bytes and never less than 1, so most values are
  // decided by their length alone and only the rest are measured.
  return z
    .string()
    .refine(
      (text) => text.length <= maxBytes && (text.length * 3 <= maxBytes || utf8ByteLength(text) <= maxBytes),
      { error: `Too big: expected string to have <=${maxBytes} bytes` },
    );
}

/** callId, threadId, turnId, messageId, rolloutId: non-empty, at most 256 characters. */
export const IdSchema = z.string().min(1).max(MAX_ID_LENGTH);

export const ServerNameSchema = z
  .string()
  .min(1)
  .max(MAX_SERVER_NAME_LENGTH)
  .regex(SERVER_NAME_PATTERN, { error: `must match pattern ${SERVER_NAME_PATTERN.source}` });

/** A tool, namespace or hook name as a caller sends it. */
export const NameSchema = z.string().min(1).max(MAX_NAME_LENGTH);

export const UriSchema = z.string().min(1).max(MAX_URI_LENGTH);

export const CursorSchema = cappedString(MAX_CURSOR_BYTES);

export const ShortTextSchema = cappedString(MAX_SHORT_TEXT_BYTES);

/** A catalog revision: the KV sequence of a change, a non-negative integer. */
export const RevisionSchema = z.int().nonnegative();

/** Milliseconds; fractions allowed (the model header prints wall time to 0.1 ms). */
export const DurationMsSchema = z.number().nonnegative();

/** An instant as ISO 8601 with an offset, e.g. `2026-11-30T05:20:28.000Z`. */
export const TimestampSchema = z.iso.datetime({ offset: true });

/** Hex SHA-256, lower case: a tool fingerprint. */
export const FingerprintSchema = z
  .string()
  .regex(/^[0-9a-f]{64}$/, { error: "must be a lower-case hex SHA-256 (64 characters)" });

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * Any JSON value (parsed tool arguments, hook input, log data); the key must be present.
 * Bodies come from `JSON.parse`, so the value is not walked again: `z.json()` takes over a
 * second on an 8 MiB argument object.
 */
export const JsonValueSchema = z.custom<JsonValue>((value) => value !== undefined, {
  error: "Invalid input: expected a JSON value, received undefined",
});

/** A JSON object passed through untouched (schemas, `_meta`, structured content). */
export const JsonObjectSchema = z.record(z.string(), z.unknown());
export type JsonObject = z.infer<typeof JsonObjectSchema>;

/**
 * Who asked for a call: the name of the principal the HTTP edge authenticated (`Principal.name`),
 * set by the gateway; absent for a caller the edge did not authenticate (auth off) and for
 * callers on the bus. Without `[approvals] self_approve`, the approval of a call is never
 * answered by the principal that asked for it.
 */
export const RequesterSchema = z.string().min(1).max(MAX_ID_LENGTH);

/** The name a requester is shown by (an identity provider's `name` claim); never used to decide anything. */
export const RequesterNameSchema = z.string().min(1).max(256);

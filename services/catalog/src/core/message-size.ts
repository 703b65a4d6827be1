/**
 * The cap on one message from an MCP server: the largest reply toolbus carries (`[bus]
 * max_reply_bytes`, at least NATS max_payload; a reply over max_payload travels through the
 * object store). A bigger message is never buffered: its bytes are counted and dropped, and the
 * request it answers gets a clean error of its own instead of a result.
 * Here: splitting a byte stream into lines under that cap, finding which request an
 * oversized response answered, and the error it gets.
 */
import { mcpReplyTooLarge } from "@toolbus/protocol";

/** JSON-RPC error code (implementation-defined range) of a response toolbus refused for its size. */
export const OVERSIZED_MESSAGE_CODE = -32099;

/** How much of each end of an oversized message is kept to identify it. */
const EDGE_BYTES = 256;

export type Frame =
  | { kind: "message"; bytes: Uint8Array }
  | { kind: "oversized"; size: number; head: Uint8Array; tail: Uint8Array };

/**
 * Newline-delimited messages from a byte stream. Work and memory are linear in the input, and
 * a message over `maxBytes` is never held: only its size and its first and last bytes are.
 */
export class LineFramer {
  private parts: Uint8Array[] = [];
  private size = 0;
  private oversized: { head: Uint8Array; tail: Uint8Array } | undefined;

  constructor(private readonly maxBytes: number) {}

  /** Bytes of the message being read, not yet ended by its newline. */
  get pendingBytes(): number {
    return this.size;
  }

  push(chunk: Uint8Array): Frame[] {
    const frames: Frame[] = [];
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, start);
      this.take(chunk.subarray(start, newline === -1 ? chunk.length : newline));
      if (newline === -1) return frames;
      const frame = this.finish();
      if (frame) frames.push(frame);
      start = newline + 1;
    }
  }

  /** Forgets a partial message (the stream was reset). */
  clear(): void {
    this.parts = [];
    this.size = 0;
    this.oversized = undefined;
  }

  private take(piece: Uint8Array): void {
    if (piece.length === 0) return;
    this.size += piece.length;
    if (this.oversized) {
      this.oversized.tail = lastBytes(
        concat([this.oversized.tail, lastBytes(piece, EDGE_BYTES)]),
        EDGE_BYTES,
      );
      return;
    }
    this.parts.push(piece);
    if (this.size > this.maxBytes) {
      const all = concat(this.parts);
      this.oversized = { head: all.slice(0, EDGE_BYTES), tail: all.slice(-EDGE_BYTES) };
      this.parts = [];
    }
  }

  private finish(): Frame | undefined {
    const { oversized, size } = this;
    const parts = this.parts;
    this.clear();
    if (oversized) return { kind: "oversized", size, ...oversized };
    if (size === 0) return undefined;
    return { kind: "message", bytes: concat(parts) };
  }
}

const ID = String.raw`(-?\d+|"(?:[^"\\]|\\.)*")`;
/** `{"result":…` or `{"error":…`: a response whose id comes last (how the TypeScript SDK writes it). */
const RESPONSE_HEAD = /^\s*\{\s*"(?:result|error)"\s*:/;
/** `{"jsonrpc":"2.0","id":…,"result":…`: a response whose id comes first. */
const RESPONSE_HEAD_WITH_ID = new RegExp(
  String.raw`^\s*\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*${ID}\s*,\s*"(?:result|error)"\s*:`,
);
const ID_AT_END = new RegExp(String.raw`"id"\s*:\s*${ID}\s*\}\s*$`);

/**
 * The id of the JSON-RPC response an oversized message carries, read off its first and last
 * bytes; undefined when it is not recognizably a response (a request or notification from the
 * server, whose id would name one of the server's own requests, never ours).
 */
export function responseIdOf(head: string, tail: string): string | number | undefined {
  const leading = RESPONSE_HEAD_WITH_ID.exec(head);
  if (leading) return parseId(leading[1]!);
  if (!RESPONSE_HEAD.test(head)) return undefined;
  const trailing = ID_AT_END.exec(tail);
  return trailing ? parseId(trailing[1]!) : undefined;
}

function parseId(text: string): string | number {
  return JSON.parse(text) as string | number;
}

/** What an oversized response's error carries, for the words of the request it answered. */
export interface OversizedData {
  limit: number;
  /** Known over stdio, which counts the whole message; HTTP stops reading at the limit. */
  size?: number;
}

/**
 * The JSON-RPC error response that stands in for an oversized one. The transport does not know
 * which request it answers, so the message is the general one; the connection, which does,
 * says it again for that request (core/mcp-errors.ts).
 */
export function oversizedResponse(
  id: string | number,
  limit: number,
  size?: number,
): {
  jsonrpc: "2.0";
  id: string | number;
  error: { code: number; message: string; data: OversizedData };
} {
  const data: OversizedData = size === undefined ? { limit } : { limit, size };
  return {
    jsonrpc: "2.0",
    id,
    error: {
      code: OVERSIZED_MESSAGE_CODE,
      message: mcpReplyTooLarge({ limit, ...(size === undefined ? {} : { bytes: size }) }),
      data,
    },
  };
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const total = parts.reduce((sum, part) => sum + part.length, 0);
  const out = new Uint8Array(total);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

function lastBytes(bytes: Uint8Array, count: number): Uint8Array {
  return bytes.length <= count ? bytes : bytes.subarray(bytes.length - count);
}

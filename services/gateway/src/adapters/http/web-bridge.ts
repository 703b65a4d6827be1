/**
 * Between fastify's Node request/response and the web-standard `Request`/`Response` the MCP
 * transport speaks: headers in, status, headers and a (possibly endless SSE) body out. A client
 * that closes its connection cancels the body stream.
 *
 * The transport answers every POST that carries a request with an SSE stream. When that stream
 * turns out to hold a single event, the answer, and then ends, it is sent as `application/json`
 * instead: a client of streamable HTTP accepts either for a POST, and a JSON body costs both
 * sides far less than a stream (parsing SSE is most of what an MCP client spends on a call).
 * Anything else (progress, log messages, a question for the client, an answer slower than
 * SSE_COMMIT_MS) goes out as the SSE stream it is.
 */
import type { ServerResponse } from "node:http";
import type { FastifyRequest } from "fastify";

/** How long an answer may take and still go out as JSON; after it the SSE headers are sent. */
export const SSE_COMMIT_MS = 2_000;

const SSE_EVENT_START = "event: message\ndata: ";
const SSE_EVENT_END = "\n\n";

/**
 * The request as the transport reads it: method, URL and headers; the body comes parsed
 * (fastify read it). Not a full `Request`: building one (with its AbortSignal) costs more than
 * the rest of the bridge, and the transport reads nothing else of it.
 */
export function toWebRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  }
  const host = request.headers.host ?? "localhost";
  const transportRequest: Pick<Request, "method" | "url" | "headers"> = {
    method: request.method,
    url: `http://${host}${request.url}`,
    headers,
  };
  return transportRequest as Request;
}

export interface SendOptions {
  /** The POST carried exactly one JSON-RPC request, so a one-event stream is its whole answer. */
  singleRequest?: boolean;
}

/** Writes the response; resolves when it ended or the client went away. */
export async function sendWebResponse(
  response: Response,
  raw: ServerResponse,
  options: SendOptions = {},
): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  if (!response.body) {
    raw.writeHead(response.status, headers);
    raw.end();
    return;
  }
  const reader = response.body.getReader();
  const cancel = () => {
    reader.cancel().catch(() => undefined);
  };
  raw.once("close", cancel);
  try {
    let next = reader.read();
    if (options.singleRequest && headers["content-type"] === "text/event-stream") {
      const first = await settledWithin(next, SSE_COMMIT_MS);
      if (first === undefined) {
        // Slow: the client gets the stream's headers now and the events as they come.
        raw.writeHead(response.status, headers);
        raw.flushHeaders();
      } else {
        if (first.done) {
          raw.writeHead(response.status, headers);
          return;
        }
        const second = reader.read();
        // The transport closes the stream right after the answer, so a lone answer's end is
        // already there; a later one means more events follow.
        const after = await settledBeforeNextTurn(second);
        const json = after?.done ? answerOfEvent(first.value) : undefined;
        if (json !== undefined) {
          raw.writeHead(response.status, {
            ...withoutSseHeaders(headers),
            "content-type": "application/json",
            "content-length": String(json.byteLength),
          });
          raw.end(json);
          return;
        }
        raw.cork();
        raw.writeHead(response.status, headers);
        raw.write(first.value);
        if (after?.done) return;
        if (after) {
          raw.write(after.value);
          next = reader.read();
        } else {
          next = second;
        }
        process.nextTick(() => raw.uncork());
      }
    } else {
      raw.writeHead(response.status, headers);
      raw.flushHeaders();
    }
    for (;;) {
      const { done, value } = await next;
      if (done) break;
      // An event and the stream's end usually come together: one write for both.
      raw.cork();
      raw.write(value);
      process.nextTick(() => raw.uncork());
      next = reader.read();
    }
  } catch {
    // The stream was cancelled (client gone) or failed; either way the response ends here.
  } finally {
    raw.off("close", cancel);
    if (!raw.writableEnded) raw.end();
    if (raw.writableCorked > 0) raw.uncork();
  }
}

/** The JSON of a chunk that is exactly one SSE `message` event, as the transport writes it. */
function answerOfEvent(chunk: Uint8Array): Buffer | undefined {
  const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  const text = bytes.toString("utf8");
  if (!text.startsWith(SSE_EVENT_START) || !text.endsWith(SSE_EVENT_END)) return undefined;
  const json = text.slice(SSE_EVENT_START.length, -SSE_EVENT_END.length);
  // One data line: serialized JSON holds no raw line breaks, so a break means another field or event.
  if (json.includes("\n") || json.includes("\r")) return undefined;
  return Buffer.from(json, "utf8");
}

function withoutSseHeaders(headers: Record<string, string>): Record<string, string> {
  const { "cache-control": _cache, "x-accel-buffering": _buffering, ...rest } = headers;
  return rest;
}

/** The promise's value when it settles within `ms`; undefined after. */
async function settledWithin<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The promise's value when it settles before the event loop turns; undefined otherwise. */
function settledBeforeNextTurn<T>(promise: Promise<T>): Promise<T | undefined> {
  return Promise.race([promise, new Promise<undefined>((resolve) => setImmediate(() => resolve(undefined)))]);
}

/**
 * The HTTP responses of a session's streams, written on node's ServerResponse as the session's
 * server sends:
 * - `AnswerStream`, the response to a POST's requests: the answers alone go out as one JSON body
 *   (an array for a batch); anything sent before them (progress, log messages, a question for
 *   the client) turns the response into an SSE stream that ends when every request of the POST
 *   is answered (core/streamable-http.ts `PostAnswers` decides). A client of streamable HTTP
 *   accepts either for a POST, and a JSON body costs both sides far less than a stream (parsing
 *   SSE is most of what an MCP client spends on a call). Answers slower than SSE_COMMIT_MS get
 *   the stream's headers first, so the client knows the request arrived.
 * - `ServerStream`, the session's standalone SSE stream (GET), for what the server sends on no
 *   request's behalf (list_changed notifications).
 */
import type { ServerResponse } from "node:http";
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/server";
import { type AnswerWrite, type JsonRpcMessage, PostAnswers } from "../../core/streamable-http.js";

/** How long answers may take and still go out as JSON; after it the SSE headers are sent. */
export const SSE_COMMIT_MS = 2_000;
/** How often an open SSE stream gets a comment line, so idle proxies keep it (the SDK's interval). */
export const SSE_KEEP_ALIVE_MS = 15_000;

const SSE_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache, no-transform",
  connection: "keep-alive",
  // Proxies such as nginx would buffer the stream otherwise.
  "x-accel-buffering": "no",
} as const;

/** An SSE response on `raw`: its headers, events leaving in one write per turn, a keep-alive. */
class Sse {
  readonly #raw: ServerResponse;
  #keepAlive: NodeJS.Timeout | undefined;
  #corked = false;

  constructor(raw: ServerResponse) {
    this.#raw = raw;
  }

  open(headers: Record<string, string>): void {
    this.#raw.writeHead(200, { ...headers, ...SSE_HEADERS });
    this.#raw.flushHeaders();
    this.#keepAlive = setInterval(() => this.#write(": keepalive\n\n"), SSE_KEEP_ALIVE_MS);
    this.#keepAlive.unref();
  }

  event(message: JsonRpcMessage): void {
    this.#write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  /** Ends the response (the events written so far go first). */
  end(): void {
    clearInterval(this.#keepAlive);
    // Uncorked before end(): node 22 writes the end of a chunked body before what a cork holds.
    this.#uncork();
    if (!this.#raw.writableEnded) this.#raw.end();
  }

  stop(): void {
    clearInterval(this.#keepAlive);
  }

  /** Events sent in one turn of the event loop leave in one write. */
  #write(text: string): void {
    const raw = this.#raw;
    if (raw.writableEnded) return;
    if (!this.#corked) {
      this.#corked = true;
      raw.cork();
      process.nextTick(() => this.#uncork());
    }
    raw.write(text);
  }

  #uncork(): void {
    if (!this.#corked) return;
    this.#corked = false;
    this.#raw.uncork();
  }
}

export class AnswerStream {
  readonly #raw: ServerResponse;
  readonly #headers: Record<string, string>;
  readonly #answers: PostAnswers;
  readonly #sse: Sse;
  #done = false;
  readonly #commit: NodeJS.Timeout;
  readonly #onFinish: () => void;

  /**
   * `ids`: the POST's requests; `batch`: it was a JSON array. `headers` go on the response
   * whichever form it takes (the session id); `onFinish` runs once the response is over:
   * answered, ended, or closed by the client.
   */
  constructor(
    raw: ServerResponse,
    headers: Record<string, string>,
    ids: readonly RequestId[],
    batch: boolean,
    onFinish: () => void = () => {},
  ) {
    this.#raw = raw;
    this.#headers = headers;
    this.#answers = new PostAnswers(ids, batch);
    this.#sse = new Sse(raw);
    this.#onFinish = onFinish;
    this.#commit = setTimeout(() => this.#apply(this.#answers.commit()), SSE_COMMIT_MS);
    raw.once("close", () => this.#finish());
  }

  get done(): boolean {
    return this.#done;
  }

  /** A notification or request the server sends while the POST's requests run. */
  event(message: JSONRPCMessage): void {
    if (!this.#done) this.#apply(this.#answers.event(message));
  }

  /** The answer to one of the POST's requests: the response ends with the last one. */
  answer(message: JSONRPCMessage & { id: RequestId }): void {
    if (!this.#done) this.#apply(this.#answers.answer(message));
  }

  /** Ends the response as it stands (the session closed before every answer came). */
  end(): void {
    if (this.#done) return;
    if (!this.#raw.headersSent) this.#apply(this.#answers.commit());
    this.#sse.end();
    this.#finish();
  }

  #apply(write: AnswerWrite): void {
    const raw = this.#raw;
    if (write.json !== undefined) {
      clearTimeout(this.#commit);
      const body = JSON.stringify(write.json);
      raw.writeHead(200, {
        ...this.#headers,
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(body)),
      });
      raw.end(body);
      this.#finish();
      return;
    }
    if (write.open) {
      clearTimeout(this.#commit);
      this.#sse.open(this.#headers);
    }
    for (const message of write.events) this.#sse.event(message);
    if (write.end) {
      this.#sse.end();
      this.#finish();
    }
  }

  #finish(): void {
    if (this.#done) return;
    this.#done = true;
    clearTimeout(this.#commit);
    this.#sse.stop();
    this.#onFinish();
  }
}

export class ServerStream {
  readonly #sse: Sse;
  #done = false;
  readonly #onFinish: () => void;

  /** Opens the stream at once (its headers carry `headers`); `onFinish` runs once it is over. */
  constructor(raw: ServerResponse, headers: Record<string, string>, onFinish: () => void) {
    this.#sse = new Sse(raw);
    this.#onFinish = onFinish;
    this.#sse.open(headers);
    raw.once("close", () => this.#finish());
  }

  event(message: JSONRPCMessage): void {
    if (!this.#done) this.#sse.event(message);
  }

  end(): void {
    if (this.#done) return;
    this.#sse.end();
    this.#finish();
  }

  #finish(): void {
    if (this.#done) return;
    this.#done = true;
    this.#sse.stop();
    this.#onFinish();
  }
}

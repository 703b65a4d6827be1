/**
 * The HTTP response to one JSON-RPC request, written as the session's server sends: the answer
 * alone goes out as one JSON body; anything sent before it (progress, log messages, a question
 * for the client) turns the response into an SSE stream that ends with the answer. A client of
 * streamable HTTP accepts either for a POST, and a JSON body costs both sides far less than a
 * stream (parsing SSE is most of what an MCP client spends on a call). An answer slower than
 * SSE_COMMIT_MS gets the stream's headers first, so the client knows the request arrived.
 */
import type { ServerResponse } from "node:http";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** How long an answer may take and still go out as JSON; after it the SSE headers are sent. */
export const SSE_COMMIT_MS = 2_000;
/** How often an open SSE stream gets a comment line, so idle proxies keep it (the SDK's interval). */
export const SSE_KEEP_ALIVE_MS = 15_000;

export class AnswerStream {
  readonly #raw: ServerResponse;
  readonly #headers: Record<string, string>;
  #streaming = false;
  #done = false;
  #commit: NodeJS.Timeout | undefined;
  #keepAlive: NodeJS.Timeout | undefined;
  readonly #onFinish: () => void;

  /**
   * `headers` go on the response whichever form it takes (the session id); `onFinish` runs once
   * the response is over: answered, ended, or closed by the client.
   */
  constructor(raw: ServerResponse, headers: Record<string, string>, onFinish: () => void = () => {}) {
    this.#raw = raw;
    this.#headers = headers;
    this.#onFinish = onFinish;
    this.#commit = setTimeout(() => this.#startStream(), SSE_COMMIT_MS);
    raw.once("close", () => this.#finish());
  }

  get done(): boolean {
    return this.#done;
  }

  /** A notification or request the server sends while the request runs. */
  event(message: JSONRPCMessage): void {
    if (this.#done) return;
    this.#startStream();
    this.#write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  /** The answer: the response ends with it. */
  answer(message: JSONRPCMessage): void {
    if (this.#done) return;
    if (this.#streaming) {
      this.#write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    } else {
      const body = JSON.stringify(message);
      this.#raw.writeHead(200, {
        ...this.#headers,
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(body)),
      });
      this.#raw.end(body);
    }
    this.end();
  }

  /** Ends the response as it stands (also when the session closed before the answer). */
  end(): void {
    if (this.#done) return;
    if (!this.#raw.headersSent) this.#startStream();
    if (!this.#raw.writableEnded) this.#raw.end();
    this.#finish();
  }

  #startStream(): void {
    clearTimeout(this.#commit);
    if (this.#streaming || this.#done) return;
    this.#streaming = true;
    this.#raw.writeHead(200, {
      ...this.#headers,
      "content-type": "text/event-stream",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
    });
    this.#raw.flushHeaders();
    this.#keepAlive = setInterval(() => this.#write(": keepalive\n\n"), SSE_KEEP_ALIVE_MS);
    this.#keepAlive.unref();
  }

  /** Events sent in one turn of the event loop leave in one write. */
  #write(text: string): void {
    const raw = this.#raw;
    if (raw.writableEnded) return;
    if (raw.writableCorked === 0) {
      raw.cork();
      process.nextTick(() => raw.uncork());
    }
    raw.write(text);
  }

  #finish(): void {
    if (this.#done) return;
    this.#done = true;
    clearTimeout(this.#commit);
    clearInterval(this.#keepAlive);
    this.#onFinish();
  }
}

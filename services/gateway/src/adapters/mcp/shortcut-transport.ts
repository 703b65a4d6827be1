/**
 * A session's transport: the SDK's web-standard streamable HTTP transport, with a shortcut for
 * the common POST, one JSON-RPC request on the established session. The SDK transport builds a
 * web Request, a ReadableStream and a Response for every POST and validates each message again
 * after the edge did; on the shortcut the request goes straight to the session's server and
 * what the server sends for it (notifications, requests to the client, the answer) goes
 * straight to that request's AnswerStream. Everything else (initialize, batches, the client's
 * answers, GET and DELETE, replays) goes through the SDK transport as before.
 */
import type { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type {
  JSONRPCMessage,
  JSONRPCRequest,
  MessageExtraInfo,
  RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import type { AnswerStream } from "../http/answer-stream.js";

export class ShortcutTransport implements Transport {
  readonly inner: WebStandardStreamableHTTPServerTransport;
  onmessage?: Transport["onmessage"];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  /** The requests taken by the shortcut that await their answer. */
  readonly #answering = new Map<RequestId, AnswerStream>();

  constructor(inner: WebStandardStreamableHTTPServerTransport) {
    this.inner = inner;
    inner.onmessage = (message, extra) => this.onmessage?.(message, extra);
    inner.onerror = (error) => this.onerror?.(error);
    inner.onclose = () => {
      for (const stream of [...this.#answering.values()]) stream.end();
      this.onclose?.();
    };
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /**
   * Hands `request` (already validated by the edge) to the server; the stream `open` makes gets
   * what the server sends for it until the response is over (a client that went away, or a
   * request cancelled and never answered, leaves nothing behind).
   */
  accept(
    request: JSONRPCRequest,
    open: (onFinish: () => void) => AnswerStream,
    extra: MessageExtraInfo,
  ): void {
    const stream = open(() => {
      if (this.#answering.get(request.id) === stream) this.#answering.delete(request.id);
    });
    this.#answering.set(request.id, stream);
    this.onmessage?.(request, extra);
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const answer = "id" in message && ("result" in message || "error" in message);
    const id = answer ? message.id : options?.relatedRequestId;
    const stream = id === undefined || id === null ? undefined : this.#answering.get(id);
    if (!stream) return this.inner.send(message, options);
    if (answer) {
      stream.answer(message);
    } else {
      stream.event(message);
    }
  }
}

/**
 * MCP's streamable HTTP transport, the rules that need nothing but the request's method and
 * headers and what the session's server has sent (adapters/mcp/edge-transport.ts does the I/O):
 * - which requests are refused before a session sees them (Accept, Content-Type,
 *   MCP-Protocol-Version), each with its status and a JSON-RPC error saying what to send;
 * - the form of a POST's response (`PostAnswers`): the answers as one JSON body (an array for a
 *   batch) while the server sends nothing else for the POST's requests; an SSE stream as soon as
 *   it sends something else first (progress, a log message, a question for the client) or the
 *   answers take too long, ending when every request of the POST is answered.
 */
import { JsonRpcCode } from "./jsonrpc-errors.js";

/** A JSON-RPC request's id. */
export type RequestId = string | number;

/** A JSON-RPC 2.0 message, as the edge checked it against MCP's schema (the SDK's `JsonRpcMessage`). */
export interface JsonRpcMessage {
  jsonrpc: "2.0";
  id?: RequestId;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: unknown;
}

/**
 * The protocol revisions of MCP sessions (the 2025 era), newest first: those a session's
 * MCP-Protocol-Version header may name, and those its server negotiates at initialize (the
 * v2 SDK's SUPPORTED_PROTOCOL_VERSIONS, as a test checks).
 */
export const SESSION_PROTOCOL_VERSIONS: readonly string[] = [
  "2025-11-25",
  "2025-06-18",
  "2025-03-26",
  "2024-11-05",
  "2024-10-07",
];

export interface EdgeRefusal {
  status: number;
  code: number;
  message: string;
}

export interface RequestHeaders {
  accept?: string | undefined;
  contentType?: string | undefined;
  protocolVersion?: string | undefined;
}

const SESSION_NOT_FOUND =
  "Session not found: it expired or was ended; start a new session with an initialize request";

/** The JSON-RPC error for a session id that names no session here (the client starts anew). */
export const sessionNotFound: EdgeRefusal = {
  status: 404,
  code: JsonRpcCode.sessionNotFound,
  message: SESSION_NOT_FOUND,
};

/**
 * What is wrong with the headers of a request to the MCP endpoint, or undefined. `initialize`:
 * the POST is the session's initialize request, which picks its protocol version in its body
 * (the header is not checked then, as the SDK's transport does not).
 */
export function headerRefusal(
  method: "POST" | "GET" | "DELETE",
  headers: RequestHeaders,
  initialize = false,
): EdgeRefusal | undefined {
  if (method === "POST") {
    // Accept is a list: a substring check is what the spec's clients are held to (the SDK's too).
    const accept = headers.accept ?? "";
    if (!accept.includes("application/json") || !accept.includes("text/event-stream")) {
      return {
        status: 406,
        code: JsonRpcCode.serverError,
        message:
          "Not Acceptable: Client must accept both application/json and text/event-stream (send Accept: application/json, text/event-stream)",
      };
    }
    if (mediaType(headers.contentType) !== "application/json") {
      return {
        status: 415,
        code: JsonRpcCode.serverError,
        message: "Unsupported Media Type: send the JSON-RPC message with Content-Type: application/json",
      };
    }
  } else if (method === "GET" && !(headers.accept ?? "").includes("text/event-stream")) {
    return {
      status: 406,
      code: JsonRpcCode.serverError,
      message:
        "Not Acceptable: Client must accept text/event-stream to open the session's stream (send Accept: text/event-stream)",
    };
  }
  if (initialize) return undefined;
  return protocolVersionRefusal(headers.protocolVersion);
}

/** An MCP-Protocol-Version header that names no version this gateway speaks. */
export function protocolVersionRefusal(version: string | undefined): EdgeRefusal | undefined {
  if (version === undefined || SESSION_PROTOCOL_VERSIONS.includes(version)) return undefined;
  return {
    status: 400,
    code: JsonRpcCode.serverError,
    message: `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SESSION_PROTOCOL_VERSIONS.join(", ")})`,
  };
}

/** The `type/subtype` of a Content-Type header, lowercased, without its parameters. */
function mediaType(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const semicolon = header.indexOf(";");
  return (semicolon === -1 ? header : header.slice(0, semicolon)).trim().toLowerCase();
}

/** Whether a message is a JSON-RPC answer (a result or an error for a request). */
export function isAnswer<M extends JsonRpcMessage>(message: M): message is M & { id: RequestId } {
  return "id" in message && ("result" in message || "error" in message);
}

/**
 * What to write on a POST's response after a step:
 * - `json`: the whole response, one JSON body (then it is over);
 * - `open`: send the SSE stream's headers now;
 * - `events`: SSE events to write, in order;
 * - `end`: the response is over after them.
 */
export interface AnswerWrite {
  json?: JsonRpcMessage | JsonRpcMessage[];
  open: boolean;
  events: JsonRpcMessage[];
  end: boolean;
}

const NOTHING: AnswerWrite = { open: false, events: [], end: false };

/**
 * The response to one POST's requests, as the server sends (`ids`: the POST's requests, in the
 * order it gave them; a batch is answered in that order when it is answered with JSON).
 */
export class PostAnswers {
  readonly #ids: readonly RequestId[];
  readonly #batch: boolean;
  readonly #answers = new Map<RequestId, JsonRpcMessage>();
  #streaming = false;
  #over = false;

  /** `batch`: the POST was a JSON array (its answers are one too, even of one). */
  constructor(ids: readonly RequestId[], batch: boolean) {
    if (ids.length === 0) throw new Error("a POST's answers need at least one request");
    // An id the batch repeats is answered once (as the SDK's transport did): waiting for a
    // second answer would leave the response open for good.
    this.#ids = [...new Set(ids)];
    this.#batch = batch;
  }

  get streaming(): boolean {
    return this.#streaming;
  }

  get over(): boolean {
    return this.#over;
  }

  /** A notification or request the server sends for one of the POST's requests. */
  event(message: JsonRpcMessage): AnswerWrite {
    if (this.#over) return NOTHING;
    const { opened, held } = this.#stream();
    return { open: opened, events: [...held, message], end: false };
  }

  /** The answer to one of the POST's requests (others' answers, and repeats, are ignored). */
  answer(message: JsonRpcMessage & { id: RequestId }): AnswerWrite {
    if (this.#over || !this.#ids.includes(message.id) || this.#answers.has(message.id)) return NOTHING;
    this.#answers.set(message.id, message);
    const done = this.#answers.size === this.#ids.length;
    if (this.#streaming) {
      if (done) this.#over = true;
      return { open: false, events: [message], end: done };
    }
    if (!done) return NOTHING;
    this.#over = true;
    const answers = this.#ids.map((id) => this.#answers.get(id) as JsonRpcMessage);
    return { json: this.#batch ? answers : answers[0], open: false, events: [], end: true };
  }

  /** The answers took too long to wait for in silence: the stream starts now (with any held). */
  commit(): AnswerWrite {
    if (this.#over || this.#streaming) return NOTHING;
    const { held } = this.#stream();
    return { open: true, events: held, end: false };
  }

  /** Switches to a stream; `held`: the answers so far, which go out first. */
  #stream(): { opened: boolean; held: JsonRpcMessage[] } {
    if (this.#streaming) return { opened: false, held: [] };
    this.#streaming = true;
    const held = this.#ids.flatMap((id) => {
      const answer = this.#answers.get(id);
      return answer ? [answer] : [];
    });
    return { opened: true, held };
  }
}

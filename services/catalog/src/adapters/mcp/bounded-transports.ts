/**
 * The MCP transports with a cap on one message from the server (core/message-size.ts).
 * Over stdio the SDK's own read buffer re-copies the whole pending message on every chunk
 * (a 50 MB reply took 97 s); this one frames in linear time and drops an oversized message
 * unread. Over streamable HTTP a POST's response is cut off at the cap. Either way the call it
 * answers gets an error response with OVERSIZED_MESSAGE_CODE and the connection stays up.
 * The server messages on a request's response stream are marked as related to that request
 * (core/related-request.ts), which the SDK's transport does not say. Over stdio, a message
 * larger than `largeFrom` stops the reading while the process has no room for large replies
 * (`ReadPressure`): the rest waits in the server's pipe, not in this process's memory.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { PassThrough } from "node:stream";
import {
  deserializeMessage,
  type FetchLike,
  type JSONRPCMessage,
  serializeMessage,
  type Transport,
} from "@modelcontextprotocol/client";
import { LineFramer, oversizedResponse, responseIdOf } from "../../core/message-size.js";
import { markRelated } from "../../core/related-request.js";
import { SseDataRewriter } from "../../core/sse-events.js";

export interface MessageCap {
  maxMessageBytes: number;
  /** An oversized message that answered none of our requests was dropped. */
  dropped(info: { size: number; head: string }): void;
  /** When reading a large message should wait (stdio only). */
  pressure?: ReadPressure;
}

/** The process's room for large replies, as a reader of a server's output sees it. */
export interface ReadPressure {
  /** A message past this many bytes is large (NATS max_payload: it will travel as a large reply). */
  largeFrom(): number;
  hasRoom(): boolean;
  whenRoom(): Promise<void>;
}

/** Frames the child's stdout into messages, in linear time, within the cap. */
class FramedReadBuffer {
  private readonly framer: LineFramer;
  private readonly queue: JSONRPCMessage[] = [];
  private readonly decoder = new TextDecoder();

  constructor(
    private readonly cap: MessageCap,
    /** Stops the reading until the promise resolves. */
    private readonly pauseUntil: (resume: Promise<void>) => void = () => undefined,
  ) {
    this.framer = new LineFramer(cap.maxMessageBytes);
  }

  append(chunk: Buffer): void {
    this.frame(chunk);
    const { pressure } = this.cap;
    if (pressure && this.framer.pendingBytes > pressure.largeFrom() && !pressure.hasRoom()) {
      this.pauseUntil(pressure.whenRoom());
    }
  }

  private frame(chunk: Buffer): void {
    for (const frame of this.framer.push(chunk)) {
      if (frame.kind === "message") {
        this.queue.push(deserializeMessage(this.decoder.decode(frame.bytes)));
        continue;
      }
      const head = this.decoder.decode(frame.head);
      const id = responseIdOf(head, this.decoder.decode(frame.tail));
      if (id === undefined) this.cap.dropped({ size: frame.size, head: head.slice(0, 100) });
      else this.queue.push(oversizedResponse(id, this.cap.maxMessageBytes, frame.size));
    }
  }

  readMessage(): JSONRPCMessage | null {
    return this.queue.shift() ?? null;
  }

  clear(): void {
    this.framer.clear();
    this.queue.length = 0;
  }
}

/** How a stdio server's process is started: the whole of its environment, its directory, its user. */
export interface StdioLaunch {
  command: string;
  args: string[];
  /** The child's whole environment: nothing is inherited beyond it. */
  env: Record<string, string>;
  cwd: string;
  /** Started as this user (`run_as`); toolbus must be root or hold CAP_SETUID and CAP_SETGID. */
  user?: { uid: number; gid: number; runAs: string };
}

/** How long a server has, after its stdin closes and again after SIGTERM, before the next step. */
const CLOSE_GRACE_MS = 2_000;

/**
 * MCP over a child process's stdin and stdout, as the SDK's StdioClientTransport does (the same
 * close sequence: stdin ended, SIGTERM, SIGKILL, two seconds apart), reading through
 * FramedReadBuffer and able to start the child as another user, which the SDK's cannot.
 */
export class BoundedStdioClientTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private child: ChildProcess | undefined;
  private readonly readBuffer: FramedReadBuffer;
  private readonly stderrStream = new PassThrough();

  constructor(
    private readonly launch: StdioLaunch,
    cap: MessageCap,
  ) {
    // Under pressure the child's stdout is paused: the rest of a large message waits in its pipe.
    const pauseUntil = (resume: Promise<void>) => {
      const output = this.child?.stdout;
      if (!output || output.isPaused()) return;
      output.pause();
      void resume.then(() => output.resume());
    };
    this.readBuffer = new FramedReadBuffer(cap, pauseUntil);
  }

  /** The child's stderr, available before start so no early line is lost. */
  get stderr(): PassThrough {
    return this.stderrStream;
  }

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  start(): Promise<void> {
    if (this.child) throw new Error("the stdio transport is already started");
    const { command, args, env, cwd, user } = this.launch;
    return new Promise((resolve, reject) => {
      let child: ChildProcess;
      try {
        child = spawn(command, args, {
          env,
          cwd,
          stdio: ["pipe", "pipe", "pipe"],
          shell: false,
          // Its own process group: a terminal's Ctrl-C reaches toolbus, which ends its calls and
          // then closes the server, instead of the server dying under calls still in flight.
          detached: true,
          ...(user ? { uid: user.uid, gid: user.gid } : {}),
        });
      } catch (error) {
        // Node throws here (not through 'error') when it may not switch to another user.
        reject(spawnError(error, this.launch));
        return;
      }
      this.child = child;
      child.on("error", (error) => {
        const explained = spawnError(error, this.launch);
        reject(explained);
        this.onerror?.(explained);
      });
      child.on("spawn", () => resolve());
      child.on("close", () => {
        this.child = undefined;
        this.onclose?.();
      });
      child.stdin?.on("error", (error) => this.onerror?.(error));
      child.stdout?.on("data", (chunk: Buffer) => {
        try {
          this.readBuffer.append(chunk);
          this.deliver();
        } catch (error) {
          this.onerror?.(error as Error);
          void this.close();
        }
      });
      child.stdout?.on("error", (error) => this.onerror?.(error));
      child.stderr?.pipe(this.stderrStream);
    });
  }

  private deliver(): void {
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.readBuffer.readMessage();
      } catch (error) {
        this.onerror?.(error as Error);
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin) return Promise.reject(new Error("Not connected"));
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once("drain", resolve);
    });
  }

  async close(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child) {
      const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
      const settle = () =>
        Promise.race([closed, new Promise<void>((resolve) => setTimeout(resolve, CLOSE_GRACE_MS).unref())]);
      try {
        child.stdin?.end();
      } catch {
        // already gone
      }
      await settle();
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        await settle();
      }
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
    this.readBuffer.clear();
  }
}

/** A refused `run_as` in terms of the config: what was refused, and what to do. Others as Node says them. */
function spawnError(error: unknown, launch: StdioLaunch): Error {
  const code = (error as NodeJS.ErrnoException).code;
  const { user } = launch;
  if (user && code === "EPERM") {
    return new Error(
      `cannot start it as ${user.runAs} (run_as): toolbus runs as uid ${process.getuid?.()} and may not start processes as another user; run toolbus as root or give it CAP_SETUID and CAP_SETGID, or remove run_as`,
      { cause: error },
    );
  }
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * A fetch for StreamableHTTPClientTransport that cuts a POST's response off at the cap and
 * answers the request it carried with the oversized error instead; with `relatedNonce`, the
 * server's requests and notifications on a request's event stream are marked as related to it.
 */
export function boundedFetch(cap: MessageCap, base: FetchLike = fetch, relatedNonce?: string): FetchLike {
  return async (url, init) => {
    const response = await base(url, init);
    if (init?.method !== "POST" || !response.ok || !response.body) return response;
    const id = requestIdOf(init.body);
    if (id === undefined) return response;
    const type = response.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase();
    const limit = cap.maxMessageBytes;
    if (type === "text/event-stream") {
      const standIn = `\n\nevent: message\ndata: ${JSON.stringify(oversizedResponse(id, limit))}\n\n`;
      const capped = capEvents(response.body, limit, standIn);
      if (relatedNonce === undefined) return withBody(response, capped);
      return withBody(
        response,
        rewriteEvents(capped, (data) => markRelated(data, id, relatedNonce)),
      );
    }
    if (type === "application/json") {
      return withBody(response, capWhole(response.body, limit, JSON.stringify(oversizedResponse(id, limit))));
    }
    return response;
  };
}

function requestIdOf(body: unknown): string | number | undefined {
  if (typeof body !== "string") return undefined;
  try {
    const message = JSON.parse(body) as { id?: unknown; method?: unknown };
    const { id } = message;
    return typeof message.method === "string" && (typeof id === "string" || typeof id === "number")
      ? id
      : undefined;
  } catch {
    return undefined;
  }
}

function withBody(response: Response, body: ReadableStream<Uint8Array>): Response {
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/**
 * Server-sent events pass through as they come; once one event (bytes since the last blank
 * line) passes `limit`, the rest of the response is dropped and `standIn` ends the stream.
 */
function capEvents(
  upstream: ReadableStream<Uint8Array>,
  limit: number,
  standIn: string,
): ReadableStream<Uint8Array> {
  const reader = upstream.getReader();
  let sinceBoundary = 0;
  let newlines = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) return controller.close();
      for (let i = 0; i < value.length; i++) {
        const byte = value[i]!;
        if (byte === 0x0d) continue;
        if (byte === 0x0a) {
          newlines++;
          if (newlines >= 2) sinceBoundary = 0;
          continue;
        }
        newlines = 0;
        if (++sinceBoundary > limit) {
          controller.enqueue(value.subarray(0, i));
          controller.enqueue(new TextEncoder().encode(standIn));
          controller.close();
          await reader.cancel().catch(() => undefined);
          return;
        }
      }
      controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/** Each event's data through `rewrite`, as the events stream past. */
function rewriteEvents(
  upstream: ReadableStream<Uint8Array>,
  rewrite: (data: string) => string,
): ReadableStream<Uint8Array> {
  const reader = upstream.getReader();
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  const events = new SseDataRewriter(rewrite);
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) {
          const rest = events.push(decoder.decode()) + events.end();
          if (rest !== "") controller.enqueue(encoder.encode(rest));
          return controller.close();
        }
        const out = events.push(decoder.decode(value, { stream: true }));
        if (out !== "") return controller.enqueue(encoder.encode(out));
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/** A JSON body is read whole anyway: up to `limit` it passes, beyond it `standIn` replaces it. */
function capWhole(
  upstream: ReadableStream<Uint8Array>,
  limit: number,
  standIn: string,
): ReadableStream<Uint8Array> {
  const reader = upstream.getReader();
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      const parts: Uint8Array[] = [];
      let size = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.length;
        if (size > limit) {
          await reader.cancel().catch(() => undefined);
          controller.enqueue(new TextEncoder().encode(standIn));
          return controller.close();
        }
        parts.push(value);
      }
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

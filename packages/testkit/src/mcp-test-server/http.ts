/**
 * Serves test-server sessions over streamable HTTP at `/mcp` on 127.0.0.1, statefully: one
 * transport per `mcp-session-id`, so list_changed notifications reach each client's GET stream.
 */
import { randomUUID } from "node:crypto";
import { appendFileSync } from "node:fs";
import {
  createServer,
  type Server as HttpServer,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import { isInitializeRequest, WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/server";
import { log } from "./script-source.js";
import type { TestSession } from "./session.js";

export const MCP_PATH = "/mcp";

export interface HttpHost {
  url: string;
  close(): Promise<void>;
}

/** `headerLogPath`: where each request's method and headers are appended (see HeaderLogLineSchema). */
export async function serveHttp(
  port: number,
  newSession: () => TestSession,
  headerLogPath?: string,
): Promise<HttpHost> {
  const transports = new Map<string, WebStandardStreamableHTTPServerTransport>();

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (headerLogPath) {
      const line = { at: new Date().toISOString(), method: req.method ?? "", headers: req.headers };
      appendFileSync(headerLogPath, `${JSON.stringify(line)}\n`);
    }
    if (new URL(req.url ?? "/", "http://localhost").pathname !== MCP_PATH)
      return reply(res, 404, `Not found: the MCP endpoint is ${MCP_PATH}`);
    const sessionId = req.headers["mcp-session-id"];
    if (typeof sessionId === "string") {
      const transport = transports.get(sessionId);
      if (!transport) return reply(res, 404, `Session not found: ${sessionId}`);
      const body = req.method === "POST" ? await readBody(req) : undefined;
      return send(res, await transport.handleRequest(webRequest(req, body)));
    }
    if (req.method !== "POST") return reply(res, 400, "Bad Request: No valid session ID provided");
    const raw = await readBody(req);
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      return reply(res, 400, "Parse error: the body is not JSON", -32700);
    }
    if (!isInitializeRequest(body)) return reply(res, 400, "Bad Request: No valid session ID provided");
    const session = newSession();
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      // The v1 transport sent no SSE keep-alive comments; neither does this one.
      keepAliveMs: 0,
      onsessioninitialized: (id) => {
        transports.set(id, transport);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) transports.delete(transport.sessionId);
    };
    await session.connect(transport);
    await send(res, await transport.handleRequest(webRequest(req, raw), { parsedBody: body }));
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      log(`HTTP request failed: ${(error as Error).stack ?? String(error)}`);
      if (!res.headersSent) reply(res, 500, "Internal error", -32603);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  const actualPort = typeof address === "object" && address ? address.port : port;
  return {
    url: `http://127.0.0.1:${actualPort}${MCP_PATH}`,
    close: () => closeAll(server, transports),
  };
}

async function closeAll(
  server: HttpServer,
  transports: Map<string, WebStandardStreamableHTTPServerTransport>,
) {
  for (const transport of transports.values()) await transport.close().catch(() => undefined);
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** The Web Standard request the v2 transport takes, for a Node request whose body was read. */
function webRequest(req: IncomingMessage, body: string | undefined): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  }
  return new Request(new URL(req.url ?? "/", "http://127.0.0.1"), {
    method: req.method ?? "GET",
    headers,
    ...(body !== undefined ? { body } : {}),
  });
}

/**
 * Writes the transport's response: an event stream as it comes (an SSE answer event by event, a
 * GET stream until the client goes away, which cancels it so the transport forgets it), any
 * other body whole with its content-length, no body at once.
 */
async function send(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = Object.fromEntries(response.headers);
  if (response.body === null) {
    res.writeHead(response.status, headers).end();
    return;
  }
  if (!headers["content-type"]?.startsWith("text/event-stream")) {
    const body = Buffer.from(await response.arrayBuffer());
    res.writeHead(response.status, { ...headers, "content-length": String(body.length) }).end(body);
    return;
  }
  res.writeHead(response.status, headers).flushHeaders();
  const abort = new AbortController();
  res.once("close", () => abort.abort());
  await pipeline(Readable.fromWeb(response.body as NodeReadableStream), res, { signal: abort.signal }).catch(
    () => undefined,
  );
}

function reply(res: ServerResponse, status: number, message: string, code = -32000): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

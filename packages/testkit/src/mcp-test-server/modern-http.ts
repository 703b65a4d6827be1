/**
 * Serves the test server's script over MCP 2026-07-28 only (`--era 2026-07-28`), as a server
 * built on the v2 SDK's strict per-request handler does: `server/discover`, every request on its
 * own, and 2025's `initialize` refused with -32022 naming the revision it speaks. An `elicit`
 * tool asks through `input_required` and answers with what the retried call brought; the other
 * behaviours run as over 2025 (those that send the client requests mid-call do not apply).
 * Calls, reads and request headers are logged as over 2025.
 */
import { appendFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import {
  CLIENT_CAPABILITIES_META_KEY,
  createMcpHandler,
  inputRequired,
  Server,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { type CallExtra, runBehavior, wireError } from "./behaviors.js";
import type { HttpHost } from "./http.js";
import { findTool, listedResources, toolsPage } from "./listing.js";
import type { ParsedTestServerScript } from "./script.js";
import { log } from "./script-source.js";
import { TEST_SERVER_INFO } from "./session.js";

const MCP_PATH = "/mcp";

export async function serveModernHttp(
  port: number,
  script: () => ParsedTestServerScript,
  logs: {
    callLogPath: string | undefined;
    readLogPath: string | undefined;
    headerLogPath: string | undefined;
  },
): Promise<HttpHost> {
  const handler = createMcpHandler(
    () => {
      const current = script();
      const server = new Server(TEST_SERVER_INFO, {
        capabilities: {
          tools: { listChanged: true },
          ...(current.resources !== undefined ? { resources: {} } : {}),
        },
        ...(current.instructions !== undefined ? { instructions: current.instructions } : {}),
      });
      server.setRequestHandler("tools/list", () => {
        const listed = toolsPage(script(), undefined);
        if ("invalidCursor" in listed) throw wireError(-32602, "Invalid cursor");
        return { tools: listed.items } as never;
      });
      server.setRequestHandler("tools/call", (request, ctx) => callTool(request.params, ctx, script(), logs));
      // The SDK refuses handlers for a capability the server does not declare (every request fails).
      if (current.resources === undefined) return server;
      server.setRequestHandler("resources/list", () => ({ resources: listedResources(script()) }) as never);
      server.setRequestHandler("resources/read", (request) => {
        const { uri } = request.params;
        if (logs.readLogPath)
          appendFileSync(logs.readLogPath, `${JSON.stringify({ at: new Date().toISOString(), uri })}\n`);
        const resource = script().resources?.find((candidate) => candidate.uri === uri);
        if (!resource) throw wireError(-32002, `Resource not found: ${uri}`);
        return {
          contents: [
            { uri, ...(resource.mimeType ? { mimeType: resource.mimeType } : {}), text: resource.text ?? "" },
          ],
        } as never;
      });
      return server;
    },
    { legacy: "reject", onerror: (error) => log(`MCP request failed: ${error.stack ?? String(error)}`) },
  );
  const server = createServer((req, res) => {
    serve(req, res).catch((error: unknown) => {
      log(`HTTP request failed: ${(error as Error).stack ?? String(error)}`);
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    if (logs.headerLogPath) {
      const line = { at: new Date().toISOString(), method: req.method ?? "", headers: req.headers };
      appendFileSync(logs.headerLogPath, `${JSON.stringify(line)}\n`);
    }
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname !== MCP_PATH) {
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
    }
    const body = Buffer.concat(chunks);
    const response = await handler.fetch(
      new Request(url, {
        method: req.method ?? "GET",
        headers,
        ...(req.method === "POST" ? { body } : {}),
      }),
    );
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body === null) {
      res.end();
      return;
    }
    // Streamed: a subscriptions/listen answer is an event stream that lasts.
    const abort = new AbortController();
    res.once("close", () => abort.abort());
    await pipeline(Readable.fromWeb(response.body as NodeReadableStream), res, {
      signal: abort.signal,
    }).catch(() => undefined);
  };
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  const actualPort = typeof address === "object" && address ? address.port : port;
  return {
    url: `http://127.0.0.1:${actualPort}${MCP_PATH}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function callTool(
  params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> },
  ctx: ServerContext,
  current: ParsedTestServerScript,
  logs: { callLogPath: string | undefined },
): Promise<never> {
  const { name, arguments: args = {}, _meta } = params;
  const answered = ctx.mcpReq.inputResponses;
  // A retried round (with the client's answers) is the same call: logged once.
  if (logs.callLogPath && answered === undefined) {
    const line = {
      at: new Date().toISOString(),
      pid: process.pid,
      tool: name,
      arguments: args,
      ...(_meta ? { _meta } : {}),
      clientCapabilities: (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[
        CLIENT_CAPABILITIES_META_KEY
      ],
    };
    appendFileSync(logs.callLogPath, `${JSON.stringify(line)}\n`);
  }
  const tool = findTool(current, name);
  if (!tool) throw wireError(-32602, `Unknown tool: ${name}`);
  const behavior = tool.behavior;
  if (behavior.kind === "elicit") {
    const answer = answered?.question as { action?: string; content?: unknown } | undefined;
    if (answer === undefined) {
      return inputRequired({
        inputRequests: {
          question:
            behavior.url !== undefined
              ? inputRequired.elicitUrl({ message: behavior.message, url: behavior.url })
              : inputRequired.elicit({
                  message: behavior.message,
                  requestedSchema: (behavior.requestedSchema ?? { type: "object", properties: {} }) as never,
                }),
        },
        requestState: "asked",
      }) as never;
    }
    return {
      content: [{ type: "text", text: JSON.stringify({ action: answer.action, content: answer.content }) }],
    } as never;
  }
  if (behavior.kind === "round") {
    if (answered === undefined) {
      return inputRequired({ inputRequests: behavior.requests as never, requestState: "round-1" }) as never;
    }
    const requestState = ctx.mcpReq.requestState<string>();
    return {
      content: [{ type: "text", text: JSON.stringify({ requestState, responses: answered }) }],
    } as never;
  }
  return (await runBehavior(behavior, args, { signal: ctx.mcpReq.signal } as CallExtra)) as never;
}

/**
 * Between fastify's Node request/response and the web-standard `Request`/`Response` the MCP
 * transport speaks, for what does not take the session's shortcut (answer-stream.ts):
 * initialize, batches, the client's answers, GET and DELETE. Headers in; status, headers and a
 * (possibly endless SSE) body out. A client that closes its connection cancels the body stream.
 */
import type { ServerResponse } from "node:http";
import type { FastifyRequest } from "fastify";

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

/** Writes the response; resolves when it ended or the client went away. */
export async function sendWebResponse(response: Response, raw: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  raw.writeHead(response.status, headers);
  if (!response.body) {
    raw.end();
    return;
  }
  raw.flushHeaders();
  const reader = response.body.getReader();
  const cancel = () => {
    reader.cancel().catch(() => undefined);
  };
  raw.once("close", cancel);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      // An event and the stream's end usually come together: one write for both.
      raw.cork();
      raw.write(value);
      process.nextTick(() => raw.uncork());
    }
  } catch {
    // The stream was cancelled (client gone) or failed; either way the response ends here.
  } finally {
    raw.off("close", cancel);
    if (!raw.writableEnded) raw.end();
  }
}

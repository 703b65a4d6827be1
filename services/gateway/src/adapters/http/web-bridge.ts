/**
 * Between fastify's Node request/response and the web-standard `Request`/`Response` the MCP
 * transport speaks: headers in, status, headers and a (possibly endless SSE) body out. A client
 * that closes its connection cancels the body stream.
 */
import type { ServerResponse } from "node:http";
import type { FastifyRequest } from "fastify";

/** The request without its body: the transport gets the body fastify already parsed. */
export function toWebRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  }
  const host = request.headers.host ?? "localhost";
  return new Request(`http://${host}${request.url}`, { method: request.method, headers });
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
      raw.write(value);
    }
  } catch {
    // The stream was cancelled (client gone) or failed; either way the response ends here.
  } finally {
    raw.off("close", cancel);
    if (!raw.writableEnded) raw.end();
  }
}

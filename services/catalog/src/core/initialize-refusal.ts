/**
 * A server that answers toolbus's `initialize` POST with a JSON-RPC error speaks streamable HTTP:
 * it refused, and the refusal is the news. Only a POST answered 4xx without a JSON-RPC body is a
 * server of the 2024-11-05 HTTP+SSE transport, worth trying over SSE. A server of MCP 2026-07-28
 * alone refuses `initialize` with -32022 (UnsupportedProtocolVersion, `data.supported`): falling
 * back to SSE hid that behind "SSE error: Non-200 status code (405)". Such a server is reached
 * over 2026-07-28 instead (adapters/mcp/modern-upstream.ts); one naming only revisions toolbus
 * does not speak is reported with this message.
 */

export interface JsonRpcRefusal {
  code: number;
  message: string;
  data?: unknown;
}

/** MCP 2026-07-28's UnsupportedProtocolVersion. */
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** The JSON-RPC error in an HTTP error body (the SDK's `Error POSTing to endpoint: <body>`), if it is one. */
export function jsonRpcRefusalIn(errorMessage: string): JsonRpcRefusal | undefined {
  const start = errorMessage.indexOf("{");
  if (start === -1) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(errorMessage.slice(start));
  } catch {
    return undefined;
  }
  const error = (body as { jsonrpc?: unknown; error?: unknown } | null)?.error;
  if ((body as { jsonrpc?: unknown }).jsonrpc !== "2.0" || typeof error !== "object" || error === null)
    return undefined;
  const { code, message, data } = error as { code?: unknown; message?: unknown; data?: unknown };
  if (typeof code !== "number" || typeof message !== "string") return undefined;
  return { code, message, ...(data === undefined ? {} : { data }) };
}

/** What the server's refusal of `initialize` tells a person, and what to do. */
export function initializeRefusalMessage(refusal: JsonRpcRefusal, offered: string): string {
  const said = `the server refused toolbus's initialize (protocol ${offered}): ${refusal.message} (JSON-RPC ${refusal.code})`;
  if (refusal.code !== UNSUPPORTED_PROTOCOL_VERSION) return said;
  const supported = (refusal.data as { supported?: unknown } | undefined)?.supported;
  const versions = Array.isArray(supported) && supported.every((v) => typeof v === "string") ? supported : [];
  return (
    `${said}; it speaks only ${versions.length > 0 ? versions.join(", ") : "a newer MCP revision"}, ` +
    "and toolbus connects to servers over the 2025 revisions and 2026-07-28: use a version of the server that serves one of them"
  );
}

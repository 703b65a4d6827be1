/**
 * A 2025-era connection's errors in the words they had before the catalog moved from the v1 SDK
 * (`@modelcontextprotocol/sdk`) to the v2 client: toolbus's start-up summaries, status lines and
 * call failures quote them, as the reference does. The v2 client words them barely: a server's
 * JSON-RPC error is its message alone, the connection's end and a timeout are `SdkError`s with
 * string codes, and an HTTP refusal carries its status in `data`. Here they read, and carry
 * codes, as before: `MCP error <code>: <message>` (-32000 for a closed connection, -32001 for a
 * timeout) and `Streamable HTTP error: <message>` with the HTTP status as the code.
 * A 2026-07-28 connection's errors (modern-upstream.ts) were always the v2 client's, and stay so.
 */
import { ProtocolError, SdkError, SdkErrorCode, SdkHttpError } from "@modelcontextprotocol/client";

/** What the v1 SDK called the connection's end and a request's timeout (its `ErrorCode`). */
const CONNECTION_CLOSED = -32000;
const REQUEST_TIMEOUT = -32001;

/** `error` as the v1 SDK worded it; anything it worded the same way, as it is. */
export function inLegacyWords(error: unknown): unknown {
  if (ProtocolError.isInstance(error)) return mcpError(error.code, error.message, error.data);
  if (SdkHttpError.isInstance(error)) {
    return Object.assign(new Error(`Streamable HTTP error: ${error.message}`), { code: error.status });
  }
  if (SdkError.isInstance(error)) {
    if (error.code === SdkErrorCode.ConnectionClosed)
      return mcpError(CONNECTION_CLOSED, error.message, error.data);
    if (error.code === SdkErrorCode.RequestTimeout)
      return mcpError(REQUEST_TIMEOUT, error.message, error.data);
  }
  return error;
}

/** The v1 SDK's `McpError`: its code and data, its message prefixed with the code. */
function mcpError(code: number, message: string, data: unknown): Error {
  return Object.assign(new Error(`MCP error ${code}: ${message}`), {
    code,
    ...(data === undefined ? {} : { data }),
  });
}

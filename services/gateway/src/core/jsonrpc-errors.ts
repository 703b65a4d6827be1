/**
 * The JSON-RPC error bodies the HTTP edge answers with when a request never reaches an MCP
 * session (bad host, no token, too large, not JSON, unknown session), and their codes.
 */

export const JsonRpcCode = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** Server-defined: refused at the transport (auth, host, size, overload). */
  serverError: -32000,
  /** Server-defined: the Mcp-Session-Id names no session (start a new one with initialize). */
  sessionNotFound: -32001,
  /** The MCP SDK's own: a request sent to the client got no answer in time (same number as above). */
  requestTimeout: -32001,
} as const;
export type JsonRpcCode = (typeof JsonRpcCode)[keyof typeof JsonRpcCode];

export interface JsonRpcErrorBody {
  jsonrpc: "2.0";
  id: string | number | null;
  error: { code: number; message: string };
}

export function jsonRpcError(
  code: number,
  message: string,
  id: string | number | null = null,
): JsonRpcErrorBody {
  return { jsonrpc: "2.0", id, error: { code, message } };
}

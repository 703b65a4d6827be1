/** How the MCP SDK's errors read to toolbus (pure: an error value in, words or a code out): timeouts, oversized replies, and the reference's error chain. */
import { mcpReplyTooLarge } from "@toolbus/protocol";
import { OVERSIZED_MESSAGE_CODE, type OversizedData } from "./message-size.js";

/** The SDK's request timeout (`ErrorCode.RequestTimeout`). */
export function isRequestTimeout(error: unknown): boolean {
  return (error as { code?: unknown }).code === -32001;
}

/** A reply over the size cap (bounded-transports.ts answered it for the server). */
export function isOversized(error: unknown): boolean {
  return (error as { code?: unknown }).code === OVERSIZED_MESSAGE_CODE;
}

/** The cap's own message, without the SDK's `MCP error <code>: ` decoration. */
export function oversizedText(error: unknown): string {
  return (error as Error).message.replace(/^MCP error -?\d+: /, "");
}

/**
 * An oversized reply's error in the words of the request it answered (a tool's result, a
 * listing's page, another reply: `mcpReplyTooLarge`), with the same code; any other error as it is.
 */
export function oversizedFor(method: string, error: unknown): unknown {
  if (!isOversized(error)) return error;
  const data = (error as { data?: Partial<OversizedData> }).data;
  // A server's own error with our code carries no limit: it is the server's to word.
  if (typeof data?.limit !== "number") return error;
  const bytes = typeof data.size === "number" ? { bytes: data.size } : {};
  return jsonRpcError(OVERSIZED_MESSAGE_CODE, mcpReplyTooLarge({ method, limit: data.limit, ...bytes }));
}

/** `outer: inner: innermost`, the way the reference prints an error with its causes. */
export function errorChain(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && depth < 8; depth++) {
    const message = current instanceof Error ? current.message : String(current);
    if (message && !parts.includes(message)) parts.push(message);
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join(": ");
}

/** An error an SDK request handler answers with exactly this JSON-RPC `code` and `message`. */
export function jsonRpcError(code: number, message: string): Error {
  return Object.assign(new Error(message), { code });
}

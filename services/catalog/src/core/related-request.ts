/**
 * Over streamable HTTP, the stream a server message arrives on says which request it was sent
 * in the context of (the server sends it on that request's response stream), but the SDK's
 * transport hands every message over alike. So the response stream of each request marks the
 * requests and notifications it carries in their `_meta`, and the connection takes the mark off
 * before anything else reads them. A mark counts only with this connection's nonce, so a server
 * that writes the key itself (over stdio, say) claims nothing.
 */

export const RELATED_REQUEST_KEY = "io.toolbus/related-request";

type JsonObject = Record<string, unknown>;

/** `data` (one SSE event's JSON) with each request or notification in it marked as related to `requestId`. */
export function markRelated(data: string, requestId: string | number, nonce: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return data;
  }
  const messages = Array.isArray(parsed) ? parsed : [parsed];
  let marked = false;
  for (const message of messages) {
    if (!isObject(message) || typeof message.method !== "string") continue;
    const params = isObject(message.params) ? message.params : {};
    const meta = isObject(params._meta) ? params._meta : {};
    message.params = { ...params, _meta: { ...meta, [RELATED_REQUEST_KEY]: { nonce, requestId } } };
    marked = true;
  }
  return marked ? JSON.stringify(parsed) : data;
}

/**
 * Takes the mark off `message` (whoever put it there; a `_meta` left empty goes too) and returns
 * the request it names when the mark is this connection's.
 */
export function takeRelated(message: unknown, nonce: string): string | number | undefined {
  if (!isObject(message) || !isObject(message.params)) return undefined;
  const meta = message.params._meta;
  if (!isObject(meta) || !(RELATED_REQUEST_KEY in meta)) return undefined;
  const mark = meta[RELATED_REQUEST_KEY];
  delete meta[RELATED_REQUEST_KEY];
  if (Object.keys(meta).length === 0) delete message.params._meta;
  if (!isObject(mark) || mark.nonce !== nonce) return undefined;
  const { requestId } = mark;
  return typeof requestId === "string" || typeof requestId === "number" ? requestId : undefined;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The cursor of `approvals.list`: where the previous page ended (the last request's `createdAt`
 * and id, the list's order), opaque to callers. Keyset paging: a request resolved meanwhile never
 * shifts the next page.
 */

export interface ListPosition {
  createdAt: string;
  requestId: string;
}

export function encodeListCursor(position: ListPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt, position.requestId]), "utf8").toString("base64url");
}

/** The position a cursor names; undefined for anything this service did not issue. */
export function decodeListCursor(cursor: string): ListPosition | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (!Array.isArray(value) || value.length !== 2) return undefined;
    const [createdAt, requestId] = value as unknown[];
    if (typeof createdAt !== "string" || typeof requestId !== "string") return undefined;
    if (Number.isNaN(Date.parse(createdAt))) return undefined;
    return { createdAt, requestId };
  } catch {
    return undefined;
  }
}

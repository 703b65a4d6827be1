/**
 * A parked message as stored and as listed: text fields made storable (Postgres TEXT cannot
 * hold U+0000, and a message may be parked precisely because it carries one) and the payload
 * shown as a bounded preview.
 */

export const PAYLOAD_PREVIEW_CHARS = 1_000;
/** Longest error text kept; the rest is cut, marked with `…`. */
export const MAX_PARKED_ERROR_CHARS = 4_000;

export function storableText(text: string): string {
  return text.replaceAll("\u0000", "\uFFFD");
}

export function parkedError(error: string): string {
  const text = storableText(error);
  return text.length <= MAX_PARKED_ERROR_CHARS ? text : `${text.slice(0, MAX_PARKED_ERROR_CHARS - 1)}…`;
}

export function payloadPreview(payload: string): string {
  return payload.length <= PAYLOAD_PREVIEW_CHARS ? payload : `${payload.slice(0, PAYLOAD_PREVIEW_CHARS)}…`;
}

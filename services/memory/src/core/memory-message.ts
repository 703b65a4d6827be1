/**
 * One message from the memory stream, decoded: either the thread ids whose usage it counts
 * (each distinct cited id that is a valid UUID, once, checklist 57–58) or the
 * reason it can never be counted (poison: not JSON, or not a `MemoryMessage`).
 */
import {
  createCitationStripper,
  MemoryMessageSchema,
  parseCitationBodies,
  parseWith,
  usageThreadIds,
} from "@toolbus/protocol";

export type DecodedMessage =
  | { ok: true; messageId: string; threadIds: string[] }
  | {
      ok: false;
      error: string;
      /** The `messageId` field when the body had a usable one, for the parked-message listing. */
      messageId: string | null;
    };

export function decodeMemoryMessage(text: string): DecodedMessage {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return { ok: false, error: `the message is not valid JSON (${reason})`, messageId: null };
  }
  const parsed = parseWith(MemoryMessageSchema, body);
  if (!parsed.ok) {
    return {
      ok: false,
      error: `the message is not a MemoryMessage (${parsed.message})`,
      messageId: messageIdOf(body),
    };
  }
  return { ok: true, messageId: parsed.value.messageId, threadIds: citedThreadIds(parsed.value.text) };
}

/**
 * Thread ids a message's citations name, canonical. As in the reference, the ids are parsed
 * first, which de-duplicates them across all spans (first seen, by their text), and the UUIDs
 * among them are counted: a message that names an id twice counts it once. `<proposed_plan>`
 * stripping in plan mode only changes the visible text, never the citations, so it is not
 * applied here.
 */
export function citedThreadIds(text: string): string[] {
  const stripper = createCitationStripper();
  stripper.push(text);
  stripper.finish();
  return usageThreadIds(parseCitationBodies(stripper.bodies));
}

function messageIdOf(body: unknown): string | null {
  if (typeof body !== "object" || body === null || !("messageId" in body)) return null;
  const id = (body as { messageId: unknown }).messageId;
  return typeof id === "string" && id !== "" ? id : null;
}

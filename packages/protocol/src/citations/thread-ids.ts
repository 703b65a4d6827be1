/**
 * Which cited rollout ids count as thread ids for usage accounting (docs/reference-behavior.md §9): those that
 * parse as UUIDs the way codex's `ThreadId::try_from` (uuid crate `Uuid::parse_str`) does, any
 * version, hex in either case, in the simple, hyphenated, `{braced}` or `urn:uuid:` form. Each
 * is returned in canonical lowercase hyphenated form, the key codex writes usage under.
 *
 * De-duplication, read from codex: parsing de-duplicates rollout ids (first-seen order) and
 * codex derives thread ids from that parsed citation, so one message naming a twice counts a
 * once; `usageThreadIds` does the same. Checklist 58's "[a, a, b] adds 2 to a" is about the
 * usage write itself, which does not de-duplicate the list it is given (a's two spellings, or
 * the mentions of several messages, all count).
 */
import type { MemoryCitation } from "./memory-citation.js";

const HYPHEN_POSITIONS = [8, 13, 18, 23];

function isHex(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x46) || (code >= 0x61 && code <= 0x66);
}

function hexDigits(text: string, hyphenated: boolean): string | null {
  let digits = "";
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (hyphenated && HYPHEN_POSITIONS.includes(index)) {
      if (code !== 0x2d) return null;
    } else if (isHex(code)) {
      digits += text[index];
    } else {
      return null;
    }
  }
  return digits.toLowerCase();
}

/** The canonical form of a UUID in any form `Uuid::parse_str` accepts, else null. */
export function canonicalUuid(text: string): string | null {
  let digits: string | null = null;
  if (text.length === 32) digits = hexDigits(text, false);
  else if (text.length === 36) digits = hexDigits(text, true);
  else if (text.length === 38 && text.startsWith("{") && text.endsWith("}"))
    digits = hexDigits(text.slice(1, -1), true);
  else if (text.length === 45 && text.startsWith("urn:uuid:")) digits = hexDigits(text.slice(9), true);
  if (digits === null) return null;
  return `${digits.slice(0, 8)}-${digits.slice(8, 12)}-${digits.slice(12, 16)}-${digits.slice(16, 20)}-${digits.slice(20)}`;
}

function uuidsOf(ids: readonly string[]): string[] {
  const threadIds: string[] = [];
  for (const id of ids) {
    const uuid = canonicalUuid(id);
    if (uuid !== null) threadIds.push(uuid);
  }
  return threadIds;
}

/** The thread ids whose usage a parsed citation counts; non-UUIDs are skipped. */
export function usageThreadIds(citation: MemoryCitation | null): string[] {
  return citation === null ? [] : uuidsOf(citation.rolloutIds);
}

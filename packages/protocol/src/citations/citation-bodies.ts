/**
 * Parsing the bodies of citation spans into a MemoryCitation (docs/reference-behavior.md §9 "Parsing"):
 * entries from the first `<citation_entries>` block of each body, rollout ids from its
 * `<rollout_ids>` block (else the legacy `<thread_ids>`), de-duplicated across bodies.
 * Unparseable lines are skipped; nothing here throws.
 */
import type { MemoryCitation, MemoryCitationEntry } from "./memory-citation.js";
import { parseTrimmedU32, trimmedBounds, trimRust } from "./rust-text.js";

const NOTE_MARKER = "|note=[";

/** The text between the first `open` and the next `close` after it, if both exist. */
function blockBody(text: string, open: string, close: string): string | null {
  const openAt = text.indexOf(open);
  if (openAt === -1) return null;
  const start = openAt + open.length;
  const closeAt = text.indexOf(close, start);
  return closeAt === -1 ? null : text.slice(start, closeAt);
}

/** The ids block of one body: `<rollout_ids>`, else the legacy `<thread_ids>`. */
export function idsBlock(body: string): string | null {
  return (
    blockBody(body, "<rollout_ids>", "</rollout_ids>") ?? blockBody(body, "<thread_ids>", "</thread_ids>")
  );
}

/** Trimmed, non-blank lines of an ids block, in order, repeats kept. */
export function idLines(block: string): string[] {
  return block
    .split("\n")
    .map(trimRust)
    .filter((id) => id !== "");
}

/** One `path:start-end|note=[note]` line, or null when any step of the rule fails. */
export function parseEntryLine(rawLine: string): MemoryCitationEntry | null {
  // Index arithmetic on the one line keeps a 100,000-line block from allocating per step.
  const [start, end] = trimmedBounds(rawLine);
  if (start === end) return null;
  const noteAt = rawLine.lastIndexOf(NOTE_MARKER, end - NOTE_MARKER.length);
  const noteStart = noteAt + NOTE_MARKER.length;
  if (noteAt < start || noteStart >= end || rawLine.charCodeAt(end - 1) !== 0x5d /* ] */) return null;
  const colonAt = noteAt === start ? -1 : rawLine.lastIndexOf(":", noteAt - 1);
  if (colonAt < start) return null;
  const dashAt = rawLine.indexOf("-", colonAt + 1);
  if (dashAt === -1 || dashAt >= noteAt) return null;
  const lineStart = parseTrimmedU32(rawLine, colonAt + 1, dashAt);
  const lineEnd = parseTrimmedU32(rawLine, dashAt + 1, noteAt);
  if (lineStart === null || lineEnd === null) return null;
  const [pathStart, pathEnd] = trimmedBounds(rawLine, start, colonAt);
  const [noteTextStart, noteTextEnd] = trimmedBounds(rawLine, noteStart, end - 1);
  return {
    path: rawLine.slice(pathStart, pathEnd),
    lineStart,
    lineEnd,
    note: rawLine.slice(noteTextStart, noteTextEnd),
  };
}

export function parseCitationBodies(bodies: readonly string[]): MemoryCitation | null {
  const entries: MemoryCitationEntry[] = [];
  const rolloutIds: string[] = [];
  const seen = new Set<string>();
  for (const body of bodies) {
    const entriesBlock = blockBody(body, "<citation_entries>", "</citation_entries>");
    if (entriesBlock !== null) {
      for (const line of entriesBlock.split("\n")) {
        const entry = parseEntryLine(line);
        if (entry !== null) entries.push(entry);
      }
    }
    const ids = idsBlock(body);
    if (ids === null) continue;
    for (const id of idLines(ids)) {
      if (seen.has(id)) continue;
      seen.add(id);
      rolloutIds.push(id);
    }
  }
  return entries.length === 0 && rolloutIds.length === 0 ? null : { entries, rolloutIds };
}

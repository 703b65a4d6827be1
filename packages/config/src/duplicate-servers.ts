/**
 * Server names given twice in an `mcpServers` object. `JSON.parse` keeps the last silently — one
 * case widened a filesystem server's root from a subfolder to `/tmp` — so the text is walked
 * (jsonc-parser's visitor) for the keys as written.
 */
import jsonc from "jsonc-parser";

/** Each name `mcpServers` holds more than once, with the lines it is at, in order of first use. */
export function duplicateServerNames(text: string): Array<{ name: string; lines: number[] }> {
  const seen = new Map<string, number[]>();
  // Depth 1: the document's own keys; `mcpServers`' keys are at depth 2 inside it.
  let depth = 0;
  let inServers = false;
  let lastTopKey: string | undefined;
  jsonc.visit(text, {
    onObjectBegin() {
      depth += 1;
      if (depth === 2 && lastTopKey === "mcpServers") inServers = true;
    },
    onObjectEnd() {
      if (depth === 2) inServers = false;
      depth -= 1;
    },
    onObjectProperty(property, _offset, _length, startLine) {
      if (depth === 1) lastTopKey = property;
      else if (depth === 2 && inServers) seen.set(property, [...(seen.get(property) ?? []), startLine + 1]);
    },
  });
  return [...seen].filter(([, lines]) => lines.length > 1).map(([name, lines]) => ({ name, lines }));
}

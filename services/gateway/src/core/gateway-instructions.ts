/**
 * The `instructions` of the gateway's own `initialize` result: a line about the gateway, then
 * one section per server that sent instructions (`## <server>`, the trimmed text a model is
 * given as that server's namespace description, §3.4), by server name. Bounded: past
 * `limitBytes` the longest sections are cut to a fair share each (marked), and when even the
 * headings do not fit, the last servers are left out with a note saying how many.
 */
import { compareUtf8, namespaceDescription, takeBytesAtCharBoundary } from "@toolbus/protocol";

export const GATEWAY_INTRO =
  "toolbus gateway: the tools, resources and prompts of every MCP server configured in toolbus, behind one URL.";

/** 32 KiB: about 8k tokens of every session's context, whatever the number of servers. */
export const MAX_GATEWAY_INSTRUCTIONS_BYTES = 32 * 1024;

export const CUT_MARKER = "\n[… cut to fit the gateway's instructions]";

const SECTIONS_INTRO = "Instructions from the MCP servers behind it follow, one section per server.";

const utf8 = new TextEncoder();
const bytesOf = (text: string) => utf8.encode(text).length;

export function gatewayInstructions(
  servers: ReadonlyArray<{ name: string; instructions?: string | undefined }>,
  limitBytes = MAX_GATEWAY_INSTRUCTIONS_BYTES,
): string {
  const sections = [...servers]
    .sort((a, b) => compareUtf8(a.name, b.name))
    .map((server) => ({ heading: `## ${server.name}\n`, text: namespaceDescription(server.instructions) }))
    .filter((section) => section.text !== "");
  if (sections.length === 0) return GATEWAY_INTRO;
  const intro = `${GATEWAY_INTRO}\n${SECTIONS_INTRO}`;
  // Sections are joined by a blank line; each costs its heading and that separator.
  const overhead = (count: number, omitted: number) =>
    bytesOf(intro) +
    sections.slice(0, count).reduce((sum, section) => sum + 2 + bytesOf(section.heading), 0) +
    (omitted > 0 ? 2 + bytesOf(omittedNote(omitted)) : 0);
  let kept = sections.length;
  while (kept > 0 && overhead(kept, sections.length - kept) > limitBytes) kept -= 1;
  const omitted = sections.length - kept;
  const texts = fairShares(
    sections.slice(0, kept).map((section) => section.text),
    limitBytes - overhead(kept, omitted),
  );
  const parts = [intro, ...sections.slice(0, kept).map((section, i) => `${section.heading}${texts[i]}`)];
  if (omitted > 0) parts.push(omittedNote(omitted));
  return parts.join("\n\n");
}

function omittedNote(count: number): string {
  return `[… the instructions of ${count} more server${count === 1 ? "" : "s"} left out to fit the gateway's instructions]`;
}

/**
 * Each text whole when all fit in `budget` bytes; otherwise the short ones stay whole and the
 * rest share what is left equally, each cut on a character boundary and marked.
 */
function fairShares(texts: readonly string[], budget: number): string[] {
  const sizes = texts.map(bytesOf);
  const result = [...texts];
  let left = Math.max(0, budget);
  const bySize = sizes.map((size, index) => ({ size, index })).sort((a, b) => a.size - b.size);
  for (let i = 0; i < bySize.length; i++) {
    const { size, index } = bySize[i] as { size: number; index: number };
    const share = Math.floor(left / (bySize.length - i));
    if (size <= share) {
      left -= size;
      continue;
    }
    result[index] = cut(texts[index] as string, share);
    left -= bytesOf(result[index] as string);
  }
  return result;
}

function cut(text: string, maxBytes: number): string {
  const room = maxBytes - bytesOf(CUT_MARKER);
  return room <= 0 ? "" : `${takeBytesAtCharBoundary(text, room)}${CUT_MARKER}`;
}

/**
 * Which catalog tool a name typed at `toolbus call` means. Tools are shown by the name MCP
 * clients see (`exposedName`); a person may also type the catalog's flat name
 * (`mcp__everything__echo`), `server.tool` or `server/tool`, or the raw name when only one
 * server has it, in any case and with any separators (`get-tiny-image` as `get_tiny_image`). Every spelling is matched against the catalog's entries (never parsed into a
 * call): the call then names the entry's flat name, which the dispatcher looks up in its own
 * catalog. A name that matches nothing, or several tools, fails with the closest names.
 */
import type { ToolEntry } from "@toolbus/protocol";
import { editDistance } from "./edit-distance.js";

export type ToolMatch = { ok: true; entry: ToolEntry } | { ok: false; message: string };

/** How many names a failure suggests at most. */
export const MAX_SUGGESTIONS = 3;
/** Longer input gets no suggestions: no tool name is this long, and distance costs length². */
const MAX_SUGGESTED_INPUT = 256;

/** The name a person sees for a tool: the one MCP clients see; a hidden tool has only its flat name. */
export function displayName(entry: ToolEntry): string {
  return entry.exposedName ?? entry.flatName;
}

/**
 * `tools` is the whole catalog (hidden tools included, so that calling one gets the
 * dispatcher's own refusal), with `exposedName` set on the tools a model sees.
 */
export function resolveToolName(typed: string, tools: readonly ToolEntry[]): ToolMatch {
  const name = typed.trim();
  // The spellings, most specific first: the first that matches anything decides.
  const spellings: Array<(entry: ToolEntry) => boolean> = [
    (entry) => entry.exposedName === name,
    (entry) => entry.flatName === name,
    (entry) =>
      serverAndTool(name).some(([server, tool]) => entry.server === server && entry.rawName === tool),
    (entry) => entry.rawName === name,
    // Loosely: any case, any run of separators (`get-tiny-image` as `get_tiny_image`,
    // `everything.get-tiny-image` as the listed `everything__get_tiny_image`).
    (entry) => spellingsOf(entry).some((spelling) => loose(spelling) === loose(name)),
  ];
  for (const matches of spellings) {
    const found = tools.filter(matches);
    if (found.length === 1) return { ok: true, entry: found[0]! };
    if (found.length > 1) {
      const names = found.map(displayName).sort();
      return {
        ok: false,
        message: `${JSON.stringify(name)} names a tool on ${found.length} servers: ${names.join(", ")}; call it by one of those names`,
      };
    }
  }
  const closest = suggestions(name, tools);
  const hint =
    closest.length > 0
      ? `; did you mean ${closest.join(" or ")}? (\`toolbus tools\` lists every tool)`
      : "; `toolbus tools` lists the tools you can call";
  return { ok: false, message: `no tool is named ${JSON.stringify(name)}${hint}` };
}

/** The names a tool may be typed by: as listed, flat, `server.tool`, and its raw name. */
function spellingsOf(entry: ToolEntry): string[] {
  return [displayName(entry), entry.flatName, `${entry.server}.${entry.rawName}`, entry.rawName];
}

/** A name with case and separators ignored: `Get-Tiny.Image` → `get_tiny_image`. */
function loose(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, "_");
}

/** `server.tool`, `server/tool`, `server__tool`, `mcp__server__tool`: every (server, tool) it may mean. */
function serverAndTool(name: string): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  const separator = /[./]/.exec(name);
  if (separator) pairs.push([name.slice(0, separator.index), name.slice(separator.index + 1)]);
  const bare = name.startsWith("mcp__") ? name.slice("mcp__".length) : name;
  // Server names may hold `__` themselves: every split is a candidate.
  for (let at = bare.indexOf("__"); at > 0; at = bare.indexOf("__", at + 1)) {
    pairs.push([bare.slice(0, at), bare.slice(at + 2)]);
  }
  return pairs;
}

/**
 * The names closest to `name`, best first: by edit distance to a tool's shown name, flat name or
 * raw name (ignoring case), kept when within a quarter of the name's length (at least 2) and at
 * most one edit worse than the best; and names that contain what was typed.
 */
export function suggestions(name: string, tools: readonly ToolEntry[]): string[] {
  const typed = name.toLowerCase();
  if (typed === "" || typed.length > MAX_SUGGESTED_INPUT) return [];
  const allowed = Math.max(2, Math.floor(typed.length / 4));
  const scored: Array<{ name: string; distance: number }> = [];
  for (const entry of tools) {
    if (entry.exposure === "hidden") continue;
    const shown = displayName(entry);
    const distance = Math.min(
      ...spellingsOf(entry).map((spelling) => editDistance(typed, spelling.toLowerCase())),
    );
    const contains = typed.length >= 3 && shown.toLowerCase().includes(typed);
    if (distance <= allowed || contains) scored.push({ name: shown, distance: contains ? 0.5 : distance });
  }
  const best = Math.min(...scored.map((s) => s.distance));
  const close = scored.filter((s) => s.distance <= best + 1);
  close.sort((a, b) => a.distance - b.distance || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return [...new Set(close.map((s) => s.name))].slice(0, MAX_SUGGESTIONS);
}

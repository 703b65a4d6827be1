/**
 * The gateway's exposed-name table: which name an MCP client sees for each tool of the model
 * view, and the map back from that name to the tool's catalog identity. Names are looked up,
 * never parsed. Deterministic: the same catalog gives the same names whatever its order.
 */
import {
  type CatalogInput,
  compareUtf8,
  nameHash,
  normalizeCatalog,
  type ToolEntry,
} from "@toolbus/protocol";

/**
 * `prefixed`: every tool is `<server>__<tool>`, sanitized, at most 64 bytes, unique.
 * `conditional`: a tool keeps its raw name when that name is a valid MCP tool name and no other
 * tool in the catalog has it; the others get their prefixed name.
 */
export type NamingMode = "prefixed" | "conditional";

/** What MCP clients accept as a tool name (and what this table guarantees). */
export const EXPOSED_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;
export const EXPOSED_NAME_LIMIT = 64;

export interface ExposedTool {
  readonly exposedName: string;
  readonly entry: ToolEntry;
}

export interface ExposedNameTable {
  /** In a stable order: by server, then raw name (bytewise). */
  readonly tools: readonly ExposedTool[];
  /** The catalog entry behind an exposed name, or undefined for a name this table does not have. */
  resolve(exposedName: string): ToolEntry | undefined;
}

export function buildExposedNames(entries: readonly ToolEntry[], mode: NamingMode): ExposedNameTable {
  const prefixed = prefixedNames(entries);
  const rawCounts = new Map<string, number>();
  for (const entry of entries) rawCounts.set(entry.rawName, (rawCounts.get(entry.rawName) ?? 0) + 1);
  const keepsRaw = (entry: ToolEntry) =>
    mode === "conditional" && EXPOSED_NAME_PATTERN.test(entry.rawName) && rawCounts.get(entry.rawName) === 1;

  const ordered = [...entries].sort(
    (a, b) => compareUtf8(a.server, b.server) || compareUtf8(a.rawName, b.rawName),
  );
  const used = new Set<string>();
  for (const entry of ordered) if (keepsRaw(entry)) used.add(entry.rawName);

  const tools: ExposedTool[] = [];
  const byName = new Map<string, ToolEntry>();
  for (const entry of ordered) {
    let exposedName: string;
    if (keepsRaw(entry)) {
      exposedName = entry.rawName;
    } else {
      exposedName = unusedName(prefixed.get(identity(entry)) ?? entry.rawName, identity(entry), used);
      used.add(exposedName);
    }
    tools.push({ exposedName, entry });
    byName.set(exposedName, entry);
  }
  return { tools, resolve: (exposedName) => byName.get(exposedName) };
}

function identity(entry: Pick<ToolEntry, "server" | "rawName">): string {
  return `${entry.server}\u0000${entry.rawName}`;
}

/** `<server>__<tool>` for every tool: the catalog's own algorithm, without the `mcp__` prefix, at 64 bytes. */
function prefixedNames(entries: readonly ToolEntry[]): Map<string, string> {
  const inputs: CatalogInput[] = entries.map((entry) => ({
    server: entry.server,
    tool: { name: entry.rawName },
  }));
  const normalized = normalizeCatalog(inputs, { prefixMcp: false, nameLimit: EXPOSED_NAME_LIMIT });
  return new Map(normalized.tools.map((tool) => [identity(tool), tool.flatName]));
}

/**
 * A prefixed name can only collide with a raw name kept in conditional mode (prefixed names are
 * unique among themselves); then a hash of the tool's identity replaces the name's tail.
 */
function unusedName(name: string, id: string, used: ReadonlySet<string>): string {
  if (!used.has(name)) return name;
  for (let attempt = 0; ; attempt++) {
    const suffix = nameHash(attempt === 0 ? id : `${id}\u0000${attempt}`);
    const candidate = `${name.slice(0, EXPOSED_NAME_LIMIT - suffix.length)}${suffix}`;
    if (!used.has(candidate)) return candidate;
  }
}

/**
 * Exposed names: which name an MCP client sees for each tool of the model view (and each
 * upstream prompt), and the map back from that name to the catalog identity. The one rule every
 * surface shows a tool by (the gateway's `tools/list`, the CLI, the REST API, the console).
 * Names are looked up, never parsed. Deterministic: the same catalog gives the same names
 * whatever its order.
 */
import type { ToolEntry } from "../schemas/catalog.js";
import { normalizeCatalog } from "./normalize-catalog.js";
import { nameHash } from "./sanitize.js";
import { compareUtf8 } from "./text.js";
import type { CatalogInput } from "./types.js";

/**
 * `prefixed`: every tool (prompt) is `<server>__<name>`, sanitized, at most 64 bytes, unique.
 * `conditional`: a tool (prompt) keeps its raw name when that name is a valid MCP tool name and
 * no other tool (prompt) in the catalog has it; the others get their prefixed name.
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

/** `reserved`: names the gateway answers itself (the resource tools); no catalog tool gets one. */
export function buildExposedNames(
  entries: readonly ToolEntry[],
  mode: NamingMode,
  reserved: ReadonlySet<string> = new Set(),
): ExposedNameTable {
  const named = exposeNames(entries, mode, reserved);
  return {
    tools: named.items.map(({ exposedName, item }) => ({ exposedName, entry: item })),
    resolve: named.resolve,
  };
}

/**
 * The entries with the name MCP clients see for each model-visible one (`exposedName`), named
 * over the model view as a gateway of `mode` names them; hidden entries get none. For readers
 * that show tools to people without a gateway's table (the CLI: the default `prefixed` mode).
 */
export function withExposedNames(entries: readonly ToolEntry[], mode: NamingMode = "prefixed"): ToolEntry[] {
  const table = buildExposedNames(
    entries.filter((entry) => entry.exposure !== "hidden"),
    mode,
  );
  const byFlatName = new Map(table.tools.map((tool) => [tool.entry.flatName, tool.exposedName]));
  return entries.map((entry) => {
    const exposedName = byFlatName.get(entry.flatName);
    return exposedName === undefined ? entry : { ...entry, exposedName };
  });
}

/** Anything a server lists under a name of its own: a tool, a prompt. */
export interface NamedItem {
  readonly server: string;
  readonly rawName: string;
}

export interface ExposedNames<T extends NamedItem> {
  /** In a stable order: by server, then raw name (bytewise). */
  readonly items: ReadonlyArray<{ readonly exposedName: string; readonly item: T }>;
  /** The item behind an exposed name, or undefined for a name this table does not have. */
  resolve(exposedName: string): T | undefined;
}

/**
 * The naming rule for one kind of item (tools, or prompts, each a namespace of its own). Raw
 * names are compared only within the kind: a prompt may share its name with a tool.
 */
export function exposeNames<T extends NamedItem>(
  items: readonly T[],
  mode: NamingMode,
  reserved: ReadonlySet<string> = new Set(),
): ExposedNames<T> {
  const prefixed = prefixedNames(items);
  const rawCounts = new Map<string, number>();
  for (const item of items) rawCounts.set(item.rawName, (rawCounts.get(item.rawName) ?? 0) + 1);
  const keepsRaw = (item: T) =>
    mode === "conditional" &&
    EXPOSED_NAME_PATTERN.test(item.rawName) &&
    rawCounts.get(item.rawName) === 1 &&
    !reserved.has(item.rawName);

  const ordered = [...items].sort(
    (a, b) => compareUtf8(a.server, b.server) || compareUtf8(a.rawName, b.rawName),
  );
  const used = new Set<string>(reserved);
  for (const item of ordered) if (keepsRaw(item)) used.add(item.rawName);

  const named: Array<{ exposedName: string; item: T }> = [];
  const byName = new Map<string, T>();
  for (const item of ordered) {
    let exposedName: string;
    if (keepsRaw(item)) {
      exposedName = item.rawName;
    } else {
      exposedName = unusedName(prefixed.get(identity(item)) ?? item.rawName, identity(item), used);
      used.add(exposedName);
    }
    named.push({ exposedName, item });
    byName.set(exposedName, item);
  }
  return { items: named, resolve: (exposedName) => byName.get(exposedName) };
}

function identity(item: NamedItem): string {
  return `${item.server}\u0000${item.rawName}`;
}

/** `<server>__<name>` for every item: the catalog's own algorithm, without the `mcp__` prefix, at 64 bytes. */
function prefixedNames(items: readonly NamedItem[]): Map<string, string> {
  const inputs: CatalogInput[] = items.map((item) => ({
    server: item.server,
    tool: { name: item.rawName },
  }));
  const normalized = normalizeCatalog(inputs, { prefixMcp: false, nameLimit: EXPOSED_NAME_LIMIT });
  return new Map(normalized.tools.map((tool) => [identity(tool), tool.flatName]));
}

/**
 * A prefixed name can only collide with a raw name kept in conditional mode (prefixed names are
 * unique among themselves); then a hash of the item's identity replaces the name's tail.
 */
function unusedName(name: string, id: string, used: ReadonlySet<string>): string {
  if (!used.has(name)) return name;
  for (let attempt = 0; ; attempt++) {
    const suffix = nameHash(attempt === 0 ? id : `${id}\u0000${attempt}`);
    const candidate = `${name.slice(0, EXPOSED_NAME_LIMIT - suffix.length)}${suffix}`;
    if (!used.has(candidate)) return candidate;
  }
}

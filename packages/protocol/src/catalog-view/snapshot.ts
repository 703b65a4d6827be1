/**
 * The catalog view: from the per-server KV entries to the normalized snapshot that every
 * reader (catalog.get, the dispatcher's local copy, the gateway) computes the same way.
 * Pure and deterministic: the same entries and options always give the same names.
 */
import { type ExposureKind, exposureFor } from "../naming/exposure.js";
import { toolFingerprint } from "../naming/fingerprint.js";
import { modelInputSchema, namespaceDescription } from "../naming/model-spec.js";
import { type NamedTool, nameTools, type ToolGroup } from "../naming/normalize-catalog.js";
import { searchText } from "../naming/search-text.js";
import { isModelVisible, supportsParallelCalls, withoutUntrustedMeta } from "../naming/tool-rules.js";
import type { JsonObject, NamingOptions, RawTool } from "../naming/types.js";
import {
  type CatalogServerEntry,
  type CatalogServerSummary,
  type CatalogSnapshot,
  MAX_TOOL_ICONS_BYTES,
  MAX_TOOL_META_BYTES,
  type ToolEntry,
} from "../schemas/catalog.js";

export interface SnapshotOptions {
  naming: NamingOptions;
  /** The catalog revision the entries were read at. */
  revision: number;
  /** The consumer can search tools (and its provider takes namespaces): tools are deferred. */
  searchEnabled?: boolean;
  /** `model` leaves out what the model may not see or call. */
  exposure?: "all" | "model";
}

/** What a tool's server decides about it; a server listed twice counts as its last entry. */
interface ServerView {
  readonly entry: CatalogServerEntry;
  /** The exposure of the server's model-visible tools. */
  readonly exposure: ExposureKind;
}

function isDirect(exposure: ExposureKind): boolean {
  return exposure === "direct" || exposure === "direct_model_only";
}

function isDeferred(exposure: ExposureKind): boolean {
  return exposure === "deferred" || exposure === "deferred_model_only";
}

/**
 * One tool of the snapshot, members added in the schema's order (optional ones only when
 * present) rather than spread in: this runs once per tool of every catalog build.
 */
function toolEntry(
  tool: NamedTool,
  decided: Pick<ToolEntry, "revision" | "supportsParallel" | "exposure"> & { inputSchema: JsonObject },
): ToolEntry {
  const raw = tool.tool;
  const entry: Partial<ToolEntry> = {
    server: tool.server,
    rawName: tool.rawName,
    callableNamespace: tool.callableNamespace,
    callableName: tool.callableName,
    flatName: tool.flatName,
    hookName: tool.hookName,
    fingerprint: toolFingerprint(raw),
    revision: decided.revision,
  };
  if (typeof raw.title === "string") entry.title = raw.title;
  entry.description = typeof raw.description === "string" ? raw.description : "";
  entry.inputSchema = decided.inputSchema as ToolEntry["inputSchema"];
  if (raw.outputSchema) entry.outputSchema = raw.outputSchema as ToolEntry["outputSchema"];
  if (raw.annotations) entry.annotations = raw.annotations as ToolEntry["annotations"];
  if (typeof raw.annotations?.readOnlyHint === "boolean") entry.readOnlyHint = raw.annotations.readOnlyHint;
  entry.supportsParallel = decided.supportsParallel;
  entry.exposure = decided.exposure;
  const icons = raw.icons;
  if (Array.isArray(icons) && fits(icons, MAX_TOOL_ICONS_BYTES)) entry.icons = icons;
  const meta = withoutUntrustedMeta(raw)._meta;
  if (meta !== undefined && Object.keys(meta).length > 0 && fits(meta, MAX_TOOL_META_BYTES))
    entry._meta = meta;
  return entry as ToolEntry;
}

/**
 * Servers contribute the tools they last listed, whatever their current state, so a server
 * restarting keeps its names and a call to it can wait for readiness instead of failing.
 * Disabled servers contribute nothing.
 */
export function buildCatalogSnapshot(
  entries: readonly CatalogServerEntry[],
  options: SnapshotOptions,
): CatalogSnapshot {
  const searchEnabled = options.searchEnabled ?? false;
  const views = new Map<string, ServerView>();
  const groups: ToolGroup[] = [];
  for (const entry of entries) {
    views.set(entry.server, {
      entry,
      exposure: exposureFor({ searchEnabled, omitToolsFrom: entry.omitToolsFrom }),
    });
    if (entry.status !== "disabled") groups.push({ server: entry.server, tools: entry.tools as RawTool[] });
  }
  const tools: ToolEntry[] = [];
  const direct: string[] = [];
  const deferred: string[] = [];
  // Stripping `_meta`'s connector keys (as normalizeCatalog does) changes nothing read here.
  for (const tool of nameTools(groups, options.naming).named) {
    const { entry, exposure: visibleExposure } = views.get(tool.server)!;
    const raw = tool.tool;
    // A tool whose schema no model could call with is not shown (the catalog warned when it listed it).
    const input = modelInputSchema(raw.inputSchema ?? { type: "object" });
    if (!input.ok) continue;
    const exposure = isModelVisible(raw) ? visibleExposure : "hidden";
    if (options.exposure === "model" && exposure === "hidden") continue;
    tools.push(
      toolEntry(tool, {
        revision: entry.revision,
        inputSchema: input.schema,
        supportsParallel: supportsParallelCalls(raw, entry.supportsParallelToolCalls ?? false),
        exposure,
      }),
    );
    if (isDirect(exposure)) direct.push(tool.flatName);
    else if (isDeferred(exposure)) deferred.push(tool.flatName);
  }
  return {
    revision: options.revision,
    servers: [...entries]
      .sort((a, b) => (a.server < b.server ? -1 : a.server > b.server ? 1 : 0))
      .map((entry) => serverSummary(entry)),
    tools,
    direct,
    deferred,
  };
}

function serverSummary(entry: CatalogServerEntry): CatalogServerSummary {
  const instructions = namespaceDescription(entry.instructions);
  return {
    name: entry.server,
    status: entry.status,
    ...(entry.status === "failed" && entry.statusError ? { error: entry.statusError } : {}),
    required: entry.required,
    revision: entry.revision,
    ...(entry.serverInfo ? { serverInfo: entry.serverInfo } : {}),
    ...(instructions !== "" ? { instructions } : {}),
  };
}

/** A snapshot's tools by flat name and by `namespace`/`name`, for resolving a model's call. */
export class CatalogIndex {
  private readonly byFlatName = new Map<string, ToolEntry>();
  private readonly byCallable = new Map<string, ToolEntry>();

  constructor(readonly snapshot: CatalogSnapshot) {
    for (const tool of snapshot.tools) {
      this.byFlatName.set(tool.flatName, tool);
      this.byCallable.set(`${tool.callableNamespace}\u0000${tool.callableName}`, tool);
    }
  }

  resolve(tool: string | { namespace: string; name: string }): ToolEntry | undefined {
    return typeof tool === "string"
      ? this.byFlatName.get(tool)
      : this.byCallable.get(`${tool.namespace}\u0000${tool.name}`);
  }
}

/**
 * Tools matching a query, for `tool_search`-style consumers paging through deferred tools:
 * every query term must appear in the tool's search text (case-insensitive); results keep
 * catalog order. The cursor is the offset into the matches.
 */
export function searchCatalog(
  snapshot: CatalogSnapshot,
  query: string,
  page: { cursor?: string; limit: number },
): { tools: ToolEntry[]; nextCursor?: string } {
  const terms = query.toLowerCase().split(/\s+/).filter(Boolean);
  const instructions = new Map(snapshot.servers.map((server) => [server.name, server.instructions]));
  const matches = snapshot.tools.filter((tool) => {
    if (tool.exposure === "hidden") return false;
    const text = searchText({
      flatName: tool.flatName,
      callableName: tool.callableName,
      rawName: tool.rawName,
      server: tool.server,
      title: tool.title,
      description: tool.description,
      namespaceDescription: instructions.get(tool.server),
      inputSchema: tool.inputSchema,
    }).toLowerCase();
    return terms.every((term) => text.includes(term));
  });
  const offset = page.cursor === undefined ? 0 : Number.parseInt(page.cursor, 10);
  const start = Number.isSafeInteger(offset) && offset >= 0 ? offset : 0;
  const tools = matches.slice(start, start + page.limit);
  const next = start + page.limit;
  return next < matches.length ? { tools, nextCursor: String(next) } : { tools };
}

/** Whether `value` takes at most `limit` bytes as JSON. */
function fits(value: unknown, limit: number): boolean {
  return Buffer.byteLength(JSON.stringify(value)) <= limit;
}

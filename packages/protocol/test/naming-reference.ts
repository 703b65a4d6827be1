/**
 * The naming rules and the catalog view written the plain way (recursive string building,
 * one Set per check, a regex per name): the oracle the optimized code must match exactly.
 */
import { createHash } from "node:crypto";
import {
  type CatalogInput,
  type CatalogServerEntry,
  type CatalogSnapshot,
  compareUtf8,
  exposureFor,
  isModelVisible,
  MAX_TOOL_ICONS_BYTES,
  MAX_TOOL_META_BYTES,
  modelInputSchema,
  type NamingOptions,
  type RawTool,
  supportsParallelCalls,
  type ToolEntry,
  UNTRUSTED_META_KEYS,
  withoutUntrustedMeta,
} from "../src/index.js";

export function referenceCanonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) {
    // Array.from visits holes too.
    return `[${Array.from(value, (item) => (item === undefined ? "null" : referenceCanonicalJson(item))).join(",")}]`;
  }
  const record = value as Record<string, unknown>;
  const members = Object.keys(record)
    .sort()
    .filter((key) => !["undefined", "function", "symbol"].includes(typeof record[key]))
    .map((key) => `${JSON.stringify(key)}:${referenceCanonicalJson(record[key])}`);
  return `{${members.join(",")}}`;
}

export const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

export function referenceFingerprint(tool: RawTool): string {
  const { name, title, description, inputSchema, outputSchema, annotations } = tool;
  return sha256(referenceCanonicalJson({ name, title, description, inputSchema, outputSchema, annotations }));
}

export const referenceSanitizeName = (name: string) => name.replace(/[^A-Za-z0-9_]/gu, "_") || "_";

const nameHash = (input: string) => `_${createHash("sha1").update(input, "utf8").digest("hex").slice(0, 12)}`;

/** docs/reference-behavior.md §3.3, steps 1-6, as in the first version of `normalizeCatalog`. */
export function referenceNormalizeCatalog(inputs: readonly CatalogInput[], options: NamingOptions = {}) {
  const limit = options.nameLimit ?? 64;
  const warnings: string[] = [];
  const seen = new Set<string>();
  const namespaces = new Map<string, string>();
  const candidates: { input: CatalogInput; namespaceId: string; toolId: string; name: string }[] = [];
  for (const input of inputs) {
    const rawNamespace = input.rawNamespace ?? input.server;
    const namespaceId = `${input.server}\0${rawNamespace}\0${input.connectorId ?? ""}`;
    const toolId = `${namespaceId}\0${input.tool.name}\0${input.tool.name}`;
    if (seen.has(toolId)) {
      warnings.push(`skipping duplicated tool ${input.tool.name}`);
      continue;
    }
    seen.add(toolId);
    if (!namespaces.has(namespaceId)) {
      const sanitized = referenceSanitizeName(rawNamespace);
      const prefixed =
        (options.prefixMcp ?? true) &&
        !(options.nonPrefixedServers ?? []).includes(input.server) &&
        !sanitized.startsWith("mcp__");
      namespaces.set(namespaceId, prefixed ? `mcp__${sanitized}` : sanitized);
    }
    candidates.push({ input, namespaceId, toolId, name: referenceSanitizeName(input.tool.name) });
  }
  const claims = (keys: string[]) =>
    keys.reduce((m, k) => m.set(k, (m.get(k) ?? 0) + 1), new Map<string, number>());
  const namespaceClaims = claims([...namespaces.values()]);
  for (const [id, namespace] of namespaces) {
    if (namespaceClaims.get(namespace)! < 2) continue;
    namespaces.set(
      id,
      namespace.endsWith("__") ? `${namespace.slice(0, -2)}${nameHash(id)}__` : `${namespace}${nameHash(id)}`,
    );
  }
  const pairClaims = claims(candidates.map((c) => `${namespaces.get(c.namespaceId)}\0${c.name}`));
  for (const c of candidates) {
    if (pairClaims.get(`${namespaces.get(c.namespaceId)}\0${c.name}`)! > 1) c.name += nameHash(c.toolId);
  }
  candidates.sort((a, b) => compareUtf8(a.toolId, b.toolId));
  const used = new Set<string>();
  const tools = candidates.map((c) => {
    const original = namespaces.get(c.namespaceId)!;
    const fitted = (attempt: number): [string, string] => {
      const suffix = nameHash(attempt === 0 ? c.toolId : `${c.toolId}\0${attempt}`);
      const room = Math.max(0, limit - original.length - 2);
      return room >= 13
        ? [original, `${c.name.slice(0, room - 13)}${suffix}`]
        : [original.slice(0, limit - 15), suffix];
    };
    let [namespace, name] = [original, c.name];
    if (`${namespace}__${name}`.length > limit || used.has(`${namespace}__${name}`)) {
      for (let attempt = 0; ; attempt += 1) {
        [namespace, name] = fitted(attempt);
        if (!used.has(`${namespace}__${name}`)) break;
      }
    }
    used.add(`${namespace}__${name}`);
    const joined = `${namespace.replace(/_+$/, "")}__${name.replace(/^_+/, "")}`;
    const { server, tool, connectorId } = c.input;
    return {
      server,
      rawName: tool.name,
      callableNamespace: namespace,
      callableName: name,
      flatName: `${namespace}__${name}`,
      hookName: joined.startsWith("mcp__") ? joined : `mcp__${joined}`,
      fingerprint: referenceFingerprint(tool),
      tool: withoutUntrustedMeta(tool),
      toolId: c.toolId,
      ...(connectorId === undefined ? {} : { connectorId }),
    };
  });
  return { tools, warnings };
}

/** The catalog view as first written: normalize everything, then keep and shape entries. */
export function referenceSnapshot(
  entries: readonly CatalogServerEntry[],
  options: { naming: NamingOptions; revision: number; searchEnabled?: boolean; exposure?: "all" | "model" },
): CatalogSnapshot {
  const byServer = new Map(entries.map((entry) => [entry.server, entry]));
  const inputs = entries
    .filter((entry) => entry.status !== "disabled")
    .flatMap((entry) => entry.tools.map((tool) => ({ server: entry.server, tool: tool as RawTool })));
  const tools: ToolEntry[] = [];
  for (const tool of referenceNormalizeCatalog(inputs, options.naming).tools) {
    const entry = byServer.get(tool.server)!;
    const raw = tool.tool;
    const input = modelInputSchema((raw.inputSchema ?? { type: "object" }) as Record<string, unknown>);
    if (!input.ok) continue;
    const exposure = isModelVisible(raw)
      ? exposureFor({ searchEnabled: options.searchEnabled ?? false, omitToolsFrom: entry.omitToolsFrom })
      : "hidden";
    if (options.exposure === "model" && exposure === "hidden") continue;
    tools.push({
      server: tool.server,
      rawName: tool.rawName,
      callableNamespace: tool.callableNamespace,
      callableName: tool.callableName,
      flatName: tool.flatName,
      hookName: tool.hookName,
      fingerprint: tool.fingerprint,
      revision: entry.revision,
      ...(typeof raw.title === "string" ? { title: raw.title } : {}),
      description: typeof raw.description === "string" ? raw.description : "",
      inputSchema: input.schema as ToolEntry["inputSchema"],
      ...(raw.outputSchema ? { outputSchema: raw.outputSchema as ToolEntry["outputSchema"] } : {}),
      ...(raw.annotations ? { annotations: raw.annotations as ToolEntry["annotations"] } : {}),
      ...(typeof raw.annotations?.readOnlyHint === "boolean"
        ? { readOnlyHint: raw.annotations.readOnlyHint }
        : {}),
      supportsParallel: supportsParallelCalls(raw, entry.supportsParallelToolCalls ?? false),
      exposure,
      ...(Array.isArray(raw.icons) && JSON.stringify(raw.icons).length <= MAX_TOOL_ICONS_BYTES
        ? { icons: raw.icons }
        : {}),
      ...shownMeta(raw._meta),
    });
  }
  return {
    revision: options.revision,
    servers: [...entries]
      .sort((a, b) => (a.server < b.server ? -1 : a.server > b.server ? 1 : 0))
      .map((entry) => ({
        name: entry.server,
        status: entry.status,
        ...(entry.status === "failed" && entry.statusError ? { error: entry.statusError } : {}),
        required: entry.required,
        revision: entry.revision,
      })),
    tools,
    direct: tools
      .filter((t) => t.exposure === "direct" || t.exposure === "direct_model_only")
      .map((t) => t.flatName),
    deferred: tools
      .filter((t) => t.exposure === "deferred" || t.exposure === "deferred_model_only")
      .map((t) => t.flatName),
  };
}

/** `_meta` as a catalog entry carries it: without the connector keys, when anything is left and it fits. */
function shownMeta(meta: RawTool["_meta"]): { _meta?: Record<string, unknown> } {
  if (meta === undefined) return {};
  const kept = Object.fromEntries(Object.entries(meta).filter(([key]) => !UNTRUSTED_META_KEYS.includes(key)));
  if (Object.keys(kept).length === 0 || JSON.stringify(kept).length > MAX_TOOL_META_BYTES) return {};
  return { _meta: kept };
}

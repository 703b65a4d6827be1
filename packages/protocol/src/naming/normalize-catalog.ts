/**
 * The catalog naming algorithm (docs/reference-behavior.md §3.3): from every server's raw tools to
 * unique, sanitized, length-bounded callable names, the same whatever order the tools arrive in.
 */
import { toolFingerprint } from "./fingerprint.js";
import { hookNameOfFlat } from "./hook-name.js";
import { HASH_SUFFIX_LENGTH, MCP_PREFIX, NAME_DELIMITER, nameHash, sanitizeName } from "./sanitize.js";
import { StringSet } from "./string-set.js";
import { compareUtf8 } from "./text.js";
import { withoutUntrustedMeta } from "./tool-rules.js";
import type { CatalogInput, NamingOptions, NormalizedCatalog, NormalizedTool, RawTool } from "./types.js";

export const DEFAULT_NAME_LIMIT = 64;
/** Below this, a namespace cut to make room for "__" and a hash would keep under 5 bytes. */
export const MIN_NAME_LIMIT = 20;

/** Tools listed under one namespace identity (a server, or one connector of it). */
export interface ToolGroup {
  readonly server: string;
  readonly tools: readonly RawTool[];
  readonly connectorId?: string | undefined;
  readonly rawNamespace?: string | undefined;
}

/** A tool with its callable identity: what `normalizeCatalog` returns, before fingerprinting. */
export interface NamedTool {
  readonly server: string;
  readonly tool: RawTool;
  /** `tool.name`. */
  readonly rawName: string;
  readonly connectorId: string | undefined;
  readonly toolId: string;
  readonly callableNamespace: string;
  readonly callableName: string;
  readonly flatName: string;
  readonly hookName: string;
}

/** One raw namespace identity and its callable namespace (step 3 may add a hash). */
interface NamespaceSlot {
  readonly id: string;
  name: string;
  /** The raw names already taken from this identity (step 1). */
  readonly rawNames: Set<string>;
  /** The tools' sanitized names in this callable namespace, each with its first claimant. */
  claims: Map<string, Candidate>;
  /** Position in output order (step 5). */
  rank: number;
}

/** A tool on its way through the steps; the last one fills in its callable identity. */
class Candidate implements NamedTool {
  /** Another tool claims the same (namespace, name) pair (step 4). */
  shared = false;
  callableNamespace = "";
  callableName = "";
  flatName = "";
  hookName = "";
  private identity: string | undefined;

  constructor(
    readonly server: string,
    readonly tool: RawTool,
    readonly connectorId: string | undefined,
    readonly slot: NamespaceSlot,
    readonly rawName: string,
    /** The sanitized name, until step 6 makes it the callable name. */
    public name: string,
  ) {}

  /** `namespaceId⟨NUL⟩rawName⟨NUL⟩rawName`, built only when a step needs it. */
  get toolId(): string {
    this.identity ??= `${this.slot.id}\0${this.rawName}\0${this.rawName}`;
    return this.identity;
  }

  /** Step 6 settled the name. */
  settle(namespace: string, name: string, flat: string): NamedTool {
    this.callableNamespace = namespace;
    this.callableName = name;
    this.flatName = flat;
    this.hookName = hookNameOfFlat(namespace, name, flat);
    return this;
  }
}

/** Any UTF-16 surrogate: only then does code unit order differ from `compareUtf8`'s. */
const SURROGATE = /[\ud800-\udfff]/;

function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function resolveNameLimit(nameLimit: number | undefined): number {
  const limit = nameLimit ?? DEFAULT_NAME_LIMIT;
  if (!Number.isInteger(limit) || limit < MIN_NAME_LIMIT) {
    throw new Error(
      `nameLimit must be an integer of at least ${MIN_NAME_LIMIT} bytes, got ${limit}: ` +
        `a flat name needs room for a namespace, "${NAME_DELIMITER}" and a ${HASH_SUFFIX_LENGTH}-character hash. ` +
        `Set [catalog] name_limit to ${MIN_NAME_LIMIT} or more (64 is the default, 128 matches Codex).`,
    );
  }
  return limit;
}

/** The hash goes before a trailing `__`, so `mcp__x__` stays shaped like a namespace. */
function withNamespaceHash(namespace: string, namespaceId: string): string {
  if (namespace.endsWith(NAME_DELIMITER)) {
    return `${namespace.slice(0, -NAME_DELIMITER.length)}${nameHash(namespaceId)}${NAME_DELIMITER}`;
  }
  return `${namespace}${nameHash(namespaceId)}`;
}

/** Shortens the name (or, when the namespace leaves no room, the namespace) to fit a hash. */
function fitWithHash(namespace: string, name: string, hashInput: string, limit: number): [string, string] {
  const suffix = nameHash(hashInput);
  const roomForName = Math.max(0, limit - namespace.length - NAME_DELIMITER.length);
  if (roomForName >= HASH_SUFFIX_LENGTH) {
    return [namespace, `${name.slice(0, roomForName - HASH_SUFFIX_LENGTH)}${suffix}`];
  }
  return [namespace.slice(0, limit - HASH_SUFFIX_LENGTH - NAME_DELIMITER.length), suffix];
}

/**
 * Step 6. Sanitized names are ASCII, so string length is byte length. The "used" key is the
 * flat name `ns + "__" + name`, where Codex uses `ns + name` without the delimiter: docs/contract.md
 * requires flat names to be unique, and two pairs such as (`a__b`, `c`) and (`a`, `b__c`) share
 * a flat name while their delimiter-less keys differ.
 */
function uniqueName(candidate: Candidate, used: StringSet, limit: number): NamedTool {
  const { name } = candidate;
  const namespace = candidate.slot.name;
  const flat = `${namespace}${NAME_DELIMITER}${name}`;
  if (flat.length <= limit && used.add(flat)) return candidate.settle(namespace, name, flat);
  for (let attempt = 0; ; attempt += 1) {
    const hashInput = attempt === 0 ? candidate.toolId : `${candidate.toolId}\0${attempt}`;
    const [fittedNamespace, fittedName] = fitWithHash(namespace, name, hashInput, limit);
    const fitted = `${fittedNamespace}${NAME_DELIMITER}${fittedName}`;
    if (used.add(fitted)) return candidate.settle(fittedNamespace, fittedName, fitted);
  }
}

/**
 * Steps 1-6 over tools grouped by namespace identity; the result is in output order. The
 * catalog view calls this directly so it fingerprints only the tools it keeps.
 */
export function nameTools(
  groups: Iterable<ToolGroup>,
  options: NamingOptions = {},
): { named: NamedTool[]; warnings: string[] } {
  const limit = resolveNameLimit(options.nameLimit);
  const prefixMcp = options.prefixMcp ?? true;
  const nonPrefixed = new Set(options.nonPrefixedServers ?? []);
  const warnings: string[] = [];

  // Steps 1-2: raw identities, duplicates dropped, then sanitize and prefix (once per namespace).
  const slots = new Map<string, NamespaceSlot>();
  const candidates: Candidate[] = [];
  // A tool identity repeats exactly when its namespace identity and raw name do, unless a raw
  // name holds a NUL: then (`s`, `a\0a`) and (`s\0a\0a`, `a`) spell one identity.
  let seen: StringSet | undefined;
  let surrogates = false;
  // Without a NUL inside any part, the identity order of step 5 is that of its parts.
  let nulInParts = false;
  for (const group of groups) {
    const { server, tools, connectorId } = group;
    const rawNamespace = group.rawNamespace ?? server;
    const namespaceId = `${server}\0${rawNamespace}\0${connectorId ?? ""}`;
    // A namespace exists once one of its tools is kept: a dropped duplicate claims nothing.
    let slot = slots.get(namespaceId);
    for (const tool of tools) {
      const rawName = tool.name;
      if (seen === undefined && rawName.includes("\0")) {
        seen = identitiesSoFar(candidates);
        nulInParts = true;
      }
      const repeated =
        seen === undefined
          ? slot?.rawNames.has(rawName) === true
          : !seen.add(`${namespaceId}\0${rawName}\0${rawName}`);
      if (repeated) {
        warnings.push(`skipping duplicated tool ${rawName}`);
        continue;
      }
      if (slot === undefined) {
        let namespace = sanitizeName(rawNamespace);
        if (prefixMcp && !nonPrefixed.has(server) && !namespace.startsWith(MCP_PREFIX)) {
          namespace = `${MCP_PREFIX}${namespace}`;
        }
        slot = { id: namespaceId, name: namespace, rawNames: new Set(), claims: new Map(), rank: 0 };
        slots.set(namespaceId, slot);
        surrogates ||= SURROGATE.test(namespaceId);
        nulInParts ||= [server, rawNamespace, connectorId ?? ""].some((part) => part.includes("\0"));
      }
      slot.rawNames.add(rawName);
      surrogates ||= SURROGATE.test(rawName);
      candidates.push(new Candidate(server, tool, connectorId, slot, rawName, sanitizeName(rawName)));
    }
  }

  // Step 3: a namespace claimed by more than one raw namespace identity gets a hash each.
  const namespaceClaims = new Map<string, number>();
  for (const { name } of slots.values()) namespaceClaims.set(name, (namespaceClaims.get(name) ?? 0) + 1);
  const claimsByNamespace = new Map<string, Map<string, Candidate>>();
  for (const slot of slots.values()) {
    if (namespaceClaims.get(slot.name)! > 1) slot.name = withNamespaceHash(slot.name, slot.id);
    // Distinct identities can still end up with one callable namespace; they share its names.
    const claims = claimsByNamespace.get(slot.name);
    if (claims === undefined) claimsByNamespace.set(slot.name, slot.claims);
    else slot.claims = claims;
  }

  // Step 4: a (namespace, name) pair claimed by more than one tool identity gets a hash each.
  // Tool identities are unique by now, so two claims mean two tools.
  for (const c of candidates) {
    const first = c.slot.claims.get(c.name);
    if (first === undefined) {
      c.slot.claims.set(c.name, c);
    } else {
      first.shared = true;
      c.shared = true;
    }
  }
  for (const c of candidates) {
    if (c.shared) c.name += nameHash(c.toolId);
  }

  // Step 5: output order is the raw identity, bytewise. Code unit order agrees unless there are
  // surrogates, and without NULs inside the parts comparing the parts in turn agrees too.
  const compare = surrogates ? compareUtf8 : compareCodeUnits;
  if (nulInParts) {
    candidates.sort((a, b) => compare(a.toolId, b.toolId));
  } else {
    const ranked = [...slots.values()].sort((a, b) => compare(a.id, b.id));
    ranked.forEach((slot, rank) => {
      slot.rank = rank;
    });
    candidates.sort((a, b) => a.slot.rank - b.slot.rank || compare(a.rawName, b.rawName));
  }

  // Step 6: fit the limit and make every flat name unique.
  const used = new StringSet();
  return { named: candidates.map((c) => uniqueName(c, used, limit)), warnings };
}

/** The identities of the candidates kept so far, for when raw names alone no longer tell. */
function identitiesSoFar(candidates: readonly Candidate[]): StringSet {
  const seen = new StringSet();
  for (const c of candidates) seen.add(c.toolId);
  return seen;
}

/** Consecutive inputs of one namespace identity, as one group. */
function* groupsOf(inputs: ReadonlyArray<CatalogInput>): Generator<ToolGroup> {
  let group: { server: string; connectorId?: string; rawNamespace?: string; tools: RawTool[] } | undefined;
  for (const { server, tool, connectorId, rawNamespace } of inputs) {
    if (
      group === undefined ||
      group.server !== server ||
      group.connectorId !== connectorId ||
      group.rawNamespace !== rawNamespace
    ) {
      if (group !== undefined) yield group;
      group = { server, connectorId, rawNamespace, tools: [] };
    }
    group.tools.push(tool);
  }
  if (group !== undefined) yield group;
}

export function normalizeCatalog(
  inputs: ReadonlyArray<CatalogInput>,
  options: NamingOptions = {},
): NormalizedCatalog {
  const { named, warnings } = nameTools(groupsOf(inputs), options);
  const tools = named.map((t): NormalizedTool => {
    const normalized: NormalizedTool = {
      server: t.server,
      rawName: t.rawName,
      callableNamespace: t.callableNamespace,
      callableName: t.callableName,
      flatName: t.flatName,
      hookName: t.hookName,
      fingerprint: toolFingerprint(t.tool),
      tool: withoutUntrustedMeta(t.tool),
      toolId: t.toolId,
    };
    return t.connectorId === undefined ? normalized : { ...normalized, connectorId: t.connectorId };
  });
  return { tools, warnings };
}

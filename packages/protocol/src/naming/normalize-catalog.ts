/**
 * The catalog naming algorithm (codex-mcp-behavior.md §3.3): from every server's raw tools to
 * unique, sanitized, length-bounded callable names, the same whatever order the tools arrive in.
 */
import { toolFingerprint } from "./fingerprint.js";
import { hookName } from "./hook-name.js";
import { HASH_SUFFIX_LENGTH, MCP_PREFIX, NAME_DELIMITER, nameHash, sanitizeName } from "./sanitize.js";
import { compareUtf8 } from "./text.js";
import { withoutUntrustedMeta } from "./tool-rules.js";
import type { CatalogInput, NamingOptions, NormalizedCatalog, NormalizedTool } from "./types.js";

export const DEFAULT_NAME_LIMIT = 64;
/** Below this, a namespace cut to make room for "__" and a hash would keep under 5 bytes. */
export const MIN_NAME_LIMIT = 20;

/** One raw namespace identity and its callable namespace (step 3 may add a hash). */
interface NamespaceSlot {
  readonly id: string;
  name: string;
  /** The tools' sanitized names in this callable namespace, each with its first claimant. */
  claims: Map<string, Candidate>;
}

interface Candidate {
  readonly input: CatalogInput;
  readonly slot: NamespaceSlot;
  readonly toolId: string;
  name: string;
  /** Another tool claims the same (namespace, name) pair. */
  shared: boolean;
}

/** Any UTF-16 surrogate: only then does code unit order differ from `compareUtf8`'s. */
const SURROGATE = /[\ud800-\udfff]/;

const byCodeUnit = (a: Candidate, b: Candidate) => (a.toolId < b.toolId ? -1 : a.toolId > b.toolId ? 1 : 0);
const byUtf8 = (a: Candidate, b: Candidate) => compareUtf8(a.toolId, b.toolId);

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
 * flat name `ns + "__" + name`, where Codex uses `ns + name` without the delimiter: CONTRACT.md
 * requires flat names to be unique, and two pairs such as (`a__b`, `c`) and (`a`, `b__c`) share
 * a flat name while their delimiter-less keys differ.
 */
function uniqueParts(candidate: Candidate, used: Set<string>, limit: number): [string, string, string] {
  const { name, toolId } = candidate;
  const namespace = candidate.slot.name;
  const flat = `${namespace}${NAME_DELIMITER}${name}`;
  if (flat.length <= limit && !used.has(flat)) {
    used.add(flat);
    return [namespace, name, flat];
  }
  for (let attempt = 0; ; attempt += 1) {
    const hashInput = attempt === 0 ? toolId : `${toolId}\0${attempt}`;
    const [fittedNamespace, fittedName] = fitWithHash(namespace, name, hashInput, limit);
    const fitted = `${fittedNamespace}${NAME_DELIMITER}${fittedName}`;
    if (!used.has(fitted)) {
      used.add(fitted);
      return [fittedNamespace, fittedName, fitted];
    }
  }
}

export function normalizeCatalog(
  inputs: ReadonlyArray<CatalogInput>,
  options: NamingOptions = {},
): NormalizedCatalog {
  const limit = resolveNameLimit(options.nameLimit);
  const prefixMcp = options.prefixMcp ?? true;
  const nonPrefixed = new Set(options.nonPrefixedServers ?? []);
  const warnings: string[] = [];

  // Steps 1-2: raw identities, duplicates dropped, then sanitize and prefix (once per namespace).
  const seen = new Set<string>();
  const slots = new Map<string, NamespaceSlot>();
  const candidates: Candidate[] = [];
  let surrogates = false;
  // Inputs arrive grouped by server, so the previous input's namespace is usually this one's.
  let slot: NamespaceSlot | undefined;
  let slotServer = "";
  let slotRawNamespace = "";
  let slotConnectorId = "";
  for (const input of inputs) {
    const rawNamespace = input.rawNamespace ?? input.server;
    const connectorId = input.connectorId ?? "";
    if (
      slot === undefined ||
      input.server !== slotServer ||
      rawNamespace !== slotRawNamespace ||
      connectorId !== slotConnectorId
    ) {
      const namespaceId = `${input.server}\0${rawNamespace}\0${connectorId}`;
      slot = slots.get(namespaceId);
      if (slot === undefined) {
        let namespace = sanitizeName(rawNamespace);
        if (prefixMcp && !nonPrefixed.has(input.server) && !namespace.startsWith(MCP_PREFIX)) {
          namespace = `${MCP_PREFIX}${namespace}`;
        }
        slot = { id: namespaceId, name: namespace, claims: new Map() };
        slots.set(namespaceId, slot);
        surrogates ||= SURROGATE.test(namespaceId);
      }
      slotServer = input.server;
      slotRawNamespace = rawNamespace;
      slotConnectorId = connectorId;
    }
    const rawName = input.tool.name;
    const toolId = `${slot.id}\0${rawName}\0${rawName}`;
    if (seen.has(toolId)) {
      warnings.push(`skipping duplicated tool ${rawName}`);
      continue;
    }
    seen.add(toolId);
    surrogates ||= SURROGATE.test(rawName);
    candidates.push({ input, slot, toolId, name: sanitizeName(rawName), shared: false });
  }

  // Step 3: a namespace claimed by more than one raw namespace identity gets a hash each.
  const namespaceClaims = new Map<string, number>();
  for (const { name } of slots.values()) namespaceClaims.set(name, (namespaceClaims.get(name) ?? 0) + 1);
  const claimsByNamespace = new Map<string, Map<string, Candidate>>();
  for (const s of slots.values()) {
    if (namespaceClaims.get(s.name)! > 1) s.name = withNamespaceHash(s.name, s.id);
    // Distinct identities can still end up with one callable namespace; they share its names.
    const claims = claimsByNamespace.get(s.name);
    if (claims === undefined) claimsByNamespace.set(s.name, s.claims);
    else s.claims = claims;
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

  // Step 5: output order is the raw identity, bytewise (plain comparison agrees without surrogates).
  candidates.sort(surrogates ? byUtf8 : byCodeUnit);

  // Step 6: fit the limit and make every flat name unique.
  const used = new Set<string>();
  const tools: NormalizedTool[] = [];
  for (const c of candidates) {
    const [callableNamespace, callableName, flatName] = uniqueParts(c, used, limit);
    const { server, tool, connectorId } = c.input;
    const normalized: NormalizedTool = {
      server,
      rawName: tool.name,
      callableNamespace,
      callableName,
      flatName,
      hookName: hookName(callableNamespace, callableName),
      fingerprint: toolFingerprint(tool),
      tool: withoutUntrustedMeta(tool),
      toolId: c.toolId,
    };
    tools.push(connectorId === undefined ? normalized : { ...normalized, connectorId });
  }
  return { tools, warnings };
}

/**
 * Which server a `resources/read` goes to. MCP clients name a resource by URI only, so:
 * the server that listed the URI; else the one server with a template matching it. A URI two
 * servers list, or that templates of two servers match, is refused naming both, and so is a URI
 * no server lists or matches: a read is never tried on one server after another.
 *
 * Servers are hostile input here, so their share is capped: templates per server and template
 * length when the directory is built (the rest are dropped, with a warning naming the server),
 * URI length when a read comes in. Matching is linear-time (./uri-template.ts).
 */
import { type UriTemplateMatcher, uriTemplateMatcher } from "./uri-template.js";

export interface ResourceRoutingLimits {
  /** Templates kept per server, in the order it listed them. */
  readonly templatesPerServer: number;
  /** Characters in a template; a longer one is dropped. */
  readonly templateLength: number;
  /** Characters in the URI of a read; a longer one is refused. */
  readonly uriLength: number;
}

/**
 * Real servers list a handful of templates of well under 150 characters; 8192 characters holds
 * any file path (Linux's PATH_MAX is 4096). A match costs at most template length × URI length
 * steps, so at these caps a server can make one read cost at most 64 × 256 × 8192 steps.
 */
export const RESOURCE_ROUTING_LIMITS: ResourceRoutingLimits = {
  templatesPerServer: 64,
  templateLength: 256,
  uriLength: 8192,
};

export interface KnownResources {
  /** `resources/list` items: uri and owning server. */
  readonly resources: ReadonlyArray<{ uri: string; server: string }>;
  readonly templates: ReadonlyArray<{ uriTemplate: string; server: string }>;
}

/** Templates of one server left out of routing, and why (a sentence naming the server). */
export interface DroppedTemplates {
  readonly server: string;
  readonly reason: "too_many" | "too_long";
  readonly count: number;
  readonly message: string;
}

/**
 * The templates routing uses: each server's first `templatesPerServer` templates of at most
 * `templateLength` characters. The gateway lists these same templates, so a client never sees a
 * template whose URIs it cannot read.
 */
export function routableTemplates<T extends { uriTemplate: string; server: string }>(
  templates: readonly T[],
  limits: ResourceRoutingLimits = RESOURCE_ROUTING_LIMITS,
): { kept: T[]; dropped: DroppedTemplates[] } {
  const kept: T[] = [];
  const perServer = new Map<string, { kept: number; tooLong: number; tooMany: number }>();
  for (const template of templates) {
    const counts = perServer.get(template.server) ?? { kept: 0, tooLong: 0, tooMany: 0 };
    perServer.set(template.server, counts);
    if (template.uriTemplate.length > limits.templateLength) counts.tooLong += 1;
    else if (counts.kept >= limits.templatesPerServer) counts.tooMany += 1;
    else {
      counts.kept += 1;
      kept.push(template);
    }
  }
  const dropped: DroppedTemplates[] = [];
  for (const [server, counts] of perServer) {
    if (counts.tooLong > 0)
      dropped.push({
        server,
        reason: "too_long",
        count: counts.tooLong,
        message: `MCP server '${server}' listed ${counts.tooLong} resource template(s) longer than ${limits.templateLength} characters; toolbus leaves them out (reads of their URIs are refused)`,
      });
    if (counts.tooMany > 0)
      dropped.push({
        server,
        reason: "too_many",
        count: counts.tooMany,
        message: `MCP server '${server}' listed more than ${limits.templatesPerServer} resource templates; toolbus keeps the first ${limits.templatesPerServer} and leaves out ${counts.tooMany} (reads of their URIs are refused)`,
      });
  }
  return { kept, dropped };
}

/** Where reads can go: who listed each URI, and the routable templates as matchers. */
export interface ResourceDirectory {
  readonly limits: ResourceRoutingLimits;
  /** URI → the servers that listed it, sorted by name. */
  readonly listed: ReadonlyMap<string, readonly string[]>;
  /** Routable templates grouped by server, servers sorted by name. */
  readonly templates: ReadonlyArray<{ server: string; matchers: readonly UriTemplateMatcher[] }>;
  readonly dropped: readonly DroppedTemplates[];
}

/**
 * The directory for `known`. Matchers of `previous` whose server still lists their template are
 * reused, so a directory built again does not compile (and warm up) every template again.
 */
export function resourceDirectory(
  known: KnownResources,
  limits: ResourceRoutingLimits = RESOURCE_ROUTING_LIMITS,
  previous?: ResourceDirectory,
): ResourceDirectory {
  const listed = new Map<string, string[]>();
  for (const { uri, server } of known.resources) {
    const servers = listed.get(uri) ?? [];
    if (!servers.includes(server)) servers.push(server);
    listed.set(uri, servers);
  }
  for (const servers of listed.values()) servers.sort();
  const reusable = new Map<string, UriTemplateMatcher>();
  for (const { server, matchers } of previous?.templates ?? []) {
    for (const matcher of matchers) reusable.set(templateKey(server, matcher.template), matcher);
  }
  const { kept, dropped } = routableTemplates(known.templates, limits);
  const byServer = new Map<string, Map<string, UriTemplateMatcher>>();
  for (const { server, uriTemplate } of kept) {
    const matchers = byServer.get(server) ?? new Map<string, UriTemplateMatcher>();
    byServer.set(server, matchers);
    // The same template twice routes nothing more: it is matched once.
    if (matchers.has(uriTemplate)) continue;
    matchers.set(
      uriTemplate,
      reusable.get(templateKey(server, uriTemplate)) ?? uriTemplateMatcher(uriTemplate),
    );
  }
  const templates = [...byServer]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([server, matchers]) => ({ server, matchers: [...matchers.values()] }));
  return { limits, listed, templates, dropped };
}

function templateKey(server: string, template: string): string {
  return `${server}\u0000${template}`;
}

export type ResourceRoute =
  | { kind: "server"; server: string; by: "listing" | "template" }
  | {
      kind: "refused";
      reason: "uri_too_long" | "listed_twice" | "matched_twice" | "unknown";
      message: string;
    };

/** The refusal of a URI longer than routing takes, checked before anything is looked up. */
export function uriTooLong(
  uri: string,
  limits: ResourceRoutingLimits,
): Extract<ResourceRoute, { kind: "refused" }> | undefined {
  if (uri.length <= limits.uriLength) return undefined;
  return refused(
    "uri_too_long",
    `Resource URI too long: ${uri.length} characters, more than the ${limits.uriLength} toolbus routes. Read it with the read_mcp_resource tool, which names its server`,
  );
}

/**
 * Routes `uri` by the rule above. `pause` is awaited between template matches, so a caller can
 * let other work run while a server's templates are matched (matching is synchronous).
 */
export async function routeResource(
  uri: string,
  directory: ResourceDirectory,
  pause: () => Promise<void> = async () => undefined,
): Promise<ResourceRoute> {
  const tooLong = uriTooLong(uri, directory.limits);
  if (tooLong) return tooLong;
  const listedBy = directory.listed.get(uri) ?? [];
  if (listedBy.length === 1) return { kind: "server", server: listedBy[0]!, by: "listing" };
  if (listedBy.length > 1) {
    return refused(
      "listed_twice",
      `Resource ${uri} is listed by more than one server (${listedBy.join(", ")}); toolbus cannot tell which to read. Read it with the read_mcp_resource tool, naming the server`,
    );
  }
  const matched: Array<{ server: string; template: string }> = [];
  for (const { server, matchers } of directory.templates) {
    for (const matcher of matchers) {
      await pause();
      if (matcher.matches(uri)) {
        matched.push({ server, template: matcher.template });
        break; // one matching template claims the URI for its server
      }
    }
  }
  const [only] = matched;
  if (only && matched.length === 1) return { kind: "server", server: only.server, by: "template" };
  if (matched.length > 1) {
    const claims = matched.map(({ server, template }) => `${server} (${template})`).join(", ");
    return refused(
      "matched_twice",
      `Resource ${uri} matches resource templates of more than one server: ${claims}; toolbus cannot tell which to read. Read it with the read_mcp_resource tool, naming the server`,
    );
  }
  return refused(
    "unknown",
    `Resource not found: ${uri}. No server toolbus serves lists it or has a template matching it; call resources/list and resources/templates/list for what can be read`,
  );
}

function refused(
  reason: Extract<ResourceRoute, { kind: "refused" }>["reason"],
  message: string,
): Extract<ResourceRoute, { kind: "refused" }> {
  return { kind: "refused", reason, message };
}

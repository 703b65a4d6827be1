/**
 * Which server a `resources/read` goes to. MCP clients name a resource by URI only, so the
 * gateway asks, in order: the servers that listed that exact URI, the servers with a template
 * that matches it, every other server that listed resources, then every other ready server
 * (the first that can read it wins).
 */

export interface KnownResources {
  /** `resources/list` items: uri and owning server. */
  readonly resources: ReadonlyArray<{ uri: string; server: string }>;
  readonly templates: ReadonlyArray<{ uriTemplate: string; server: string }>;
}

/** Candidate servers for a URI, most likely first, without duplicates. */
export function resourceServers(
  uri: string,
  known: KnownResources,
  readyServers: readonly string[] = [],
): string[] {
  const exact = known.resources.filter((r) => r.uri === uri).map((r) => r.server);
  const templated = known.templates.filter((t) => matchesTemplate(t.uriTemplate, uri)).map((t) => t.server);
  const listing = [...known.resources.map((r) => r.server), ...known.templates.map((t) => t.server)].sort();
  return [...new Set([...exact, ...templated, ...listing, ...[...readyServers].sort()])];
}

/**
 * Whether `uri` is an expansion of an RFC 6570 template. `{var}` matches one path segment,
 * `{+var}` and `{#var}` anything, `{/var}`, `{.var}`, `{;var}`, `{?var}` and `{&var}` their
 * prefixed forms (optional).
 */
export function matchesTemplate(template: string, uri: string): boolean {
  let pattern = "^";
  let last = 0;
  for (const match of template.matchAll(/\{([^}]*)\}/g)) {
    pattern += escapeRegExp(template.slice(last, match.index));
    pattern += expressionPattern(match[1] ?? "");
    last = match.index + match[0].length;
  }
  pattern += `${escapeRegExp(template.slice(last))}$`;
  try {
    return new RegExp(pattern, "s").test(uri);
  } catch {
    return false;
  }
}

function expressionPattern(expression: string): string {
  const operator = expression[0] ?? "";
  switch (operator) {
    case "+":
    case "#":
      return `${operator === "#" ? "(?:#" : "(?:"}.*)?`;
    case "/":
      return "(?:/[^/?#]*)*";
    case ".":
      return "(?:\\.[^/?#.]*)*";
    case ";":
      return "(?:;[^/?#;]*)*";
    case "?":
    case "&":
      return `(?:[${operator === "?" ? "?" : "&"}][^#]*)?`;
    default:
      return "[^/?#]+";
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

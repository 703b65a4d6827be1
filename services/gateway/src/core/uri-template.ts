/**
 * Whether a URI is an expansion of an RFC 6570 URI template, in time linear in the URI.
 *
 * Templates come from MCP servers, so they are hostile input: compiled to a backtracking JS
 * RegExp, `x://{+a}{+a}…` takes exponential time on a URI it does not match and stalls the
 * process. Here a template is compiled to RE2 syntax and matched by re2js (a port of RE2: a lazy
 * DFA with an NFA fallback, never backtracking), so matching costs at most template length ×
 * URI length steps.
 *
 * What an expression matches (values may be anything but the separators their operator uses):
 * `{var}` one or more characters without `/`, `?` or `#`; `{+var}` anything; `{#var}` nothing
 * or `#` and anything; `{/var}`, `{.var}` and `{;var}` any number of `/`-, `.`- or
 * `;`-prefixed segments; `{?var}` and `{&var}` nothing or a `?`- or `&`-prefixed query without
 * `#`. Any other operator matches as `{var}`. A `{` with no `}` after it is a literal.
 */
import { RE2JS, RE2Set } from "re2js";

/**
 * The lazy DFA's memory per template. re2js' `RE2JS` keeps up to 8 MiB of DFA states per
 * pattern; `RE2Set` is the API that takes a bound, so each template is a set of one. Past the
 * bound the DFA starts over or hands the URI to the NFA: slower, still linear.
 */
const DFA_MEMORY_BYTES = 256 * 1024;

/** The RE2 pattern a URI must match in full to be an expansion of `template`. */
export function templatePattern(template: string): string {
  let pattern = "";
  let literalStart = 0;
  for (;;) {
    const open = template.indexOf("{", literalStart);
    const close = open < 0 ? -1 : template.indexOf("}", open);
    if (close < 0) break;
    pattern += RE2JS.quote(template.slice(literalStart, open));
    pattern += expressionPattern(template.slice(open + 1, close));
    literalStart = close + 1;
  }
  return pattern + RE2JS.quote(template.slice(literalStart));
}

function expressionPattern(expression: string): string {
  switch (expression[0]) {
    case "+":
      return "(?s:.*)";
    case "#":
      return "(?s:#.*)?";
    case "/":
      return "(?:/[^/?#]*)*";
    case ".":
      return "(?:\\.[^/?#.]*)*";
    case ";":
      return "(?:;[^/?#;]*)*";
    case "?":
      return "(?:\\?[^#]*)?";
    case "&":
      return "(?:&[^#]*)?";
    default:
      return "[^/?#]+";
  }
}

export interface UriTemplateMatcher {
  readonly template: string;
  /** Whether `uri` is an expansion of the template. */
  matches(uri: string): boolean;
}

/** A matcher for `template`, compiled on its first use (most templates never see a read). */
export function uriTemplateMatcher(template: string): UriTemplateMatcher {
  let compiled: RE2Set | null | undefined;
  const compile = (): RE2Set | null => {
    try {
      const set = new RE2Set(RE2Set.ANCHOR_BOTH, 0, DFA_MEMORY_BYTES);
      set.add(templatePattern(template));
      set.compile();
      return set;
    } catch {
      // Cannot happen for a template within the gateway's length cap (literals are quoted, the
      // rest is fixed); a template that still fails to compile matches nothing.
      return null;
    }
  };
  return {
    template,
    matches(uri) {
      if (compiled === undefined) compiled = compile();
      return compiled !== null && compiled.match(uri).length > 0;
    },
  };
}

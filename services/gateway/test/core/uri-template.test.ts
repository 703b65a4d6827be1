import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { templatePattern, uriTemplateMatcher } from "../../src/core/uri-template.js";

const matches = (template: string, uri: string) => uriTemplateMatcher(template).matches(uri);

/**
 * The matcher this one replaced: the same semantics as a backtracking JS RegExp. It stands for
 * "what ordinary templates matched before", on inputs small enough for backtracking to finish.
 */
function backtrackingReference(template: string, uri: string): boolean {
  const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const expression = (text: string) => {
    switch (text[0]) {
      case "+":
        return "(?:.*)?";
      case "#":
        return "(?:#.*)?";
      case "/":
        return "(?:/[^/?#]*)*";
      case ".":
        return "(?:\\.[^/?#.]*)*";
      case ";":
        return "(?:;[^/?#;]*)*";
      case "?":
        return "(?:[?][^#]*)?";
      case "&":
        return "(?:[&][^#]*)?";
      default:
        return "[^/?#]+";
    }
  };
  let pattern = "^";
  let last = 0;
  for (const match of template.matchAll(/\{([^}]*)\}/g)) {
    pattern += literal(template.slice(last, match.index)) + expression(match[1] ?? "");
    last = match.index + match[0].length;
  }
  return new RegExp(`${pattern}${literal(template.slice(last))}$`, "s").test(uri);
}

describe("uri templates", () => {
  it.each<[string, string, boolean]>([
    ["test://template/{id}/data", "test://template/123/data", true],
    ["test://template/{id}/data", "test://template/1/2/data", false],
    ["test://template/{id}/data", "test://template//data", false],
    ["file:///{+path}", "file:///home/me/notes.md", true],
    ["file:///{+path}", "file:///", true],
    ["file:///{+path}", "file://", false],
    ["repo://{owner}/{name}{?ref}", "repo://a/b", true],
    ["repo://{owner}/{name}{?ref}", "repo://a/b?ref=main", true],
    ["repo://{owner}/{name}{?ref}", "repo://a/b#top", false],
    ["repo://{owner}{/path*}", "repo://a/src/index.ts", true],
    ["repo://{owner}{/path*}", "repo://a", true],
    ["repo://{owner}{/path*}", "repo://a?x", false],
    ["docs://{page}", "docs://a.b", true],
    ["docs://{page}{#section}", "docs://a#intro", true],
    ["docs://{page}{.ext}", "docs://a.md.gz", true],
    ["docs://{page}{;params}", "docs://a;v=1;w=2", true],
    ["q://s{?a}{&b}", "q://s?a=1&b=2", true],
    ["q://s{?a}{&b}", "q://s&b=2", true],
    ["docs://static", "docs://static2", false],
    ["docs://static", "docs://static", true],
    // Regex syntax in a template is literal text.
    ["x://a.b(c)*[d]|e$^\\Q\\E", "x://a.b(c)*[d]|e$^\\Q\\E", true],
    ["x://a.b", "x://aXb", false],
    // A `{` with no `}` after it is literal; an empty expression matches like `{var}`.
    ["x://{open", "x://{open", true],
    ["x://{}", "x://v", true],
    ["x://{=v}", "x://v", true],
    // Values may hold a newline or any Unicode character but a separator.
    ["x://{a}", "x://line\nbreak", true],
    ["x://{a}", "x://caf\u00e9\u{1f600}", true],
  ])("%s matches %s: %s", (template, uri, expected) => {
    expect(matches(template, uri)).toBe(expected);
  });

  it("compiles a template to an RE2 pattern with its literals quoted", () => {
    expect(templatePattern("file:///{+path}.{ext}{?q}")).toBe("file:///(?s:.*)\\.[^/?#]+(?:\\?[^#]*)?");
  });

  describe("matches what the backtracking matcher matched, for ordinary templates", () => {
    const alphabet = fc.constantFrom(
      "a",
      "b",
      "Z",
      "0",
      "/",
      ".",
      ";",
      "?",
      "&",
      "#",
      "=",
      ",",
      "-",
      ":",
      "\u00e9",
      "\n",
    );
    const text = (maxLength: number) => fc.array(alphabet, { maxLength }).map((chars) => chars.join(""));
    const expression = fc
      .tuple(
        fc.constantFrom("", "+", "#", "/", ".", ";", "?", "&", "=", "!"),
        fc.constantFrom("v", "x,y", "path*", "v:3"),
      )
      .map(([operator, variables]) => `{${operator}${variables}}`);
    const part = fc.oneof(fc.record({ literal: text(4) }), fc.record({ expression, value: text(6) }));
    /** A template, and a URI built from its literals with a random value for each expression. */
    const templateAndUri = fc.array(part, { minLength: 1, maxLength: 6 }).map((parts) => ({
      template: parts.map((p) => ("literal" in p ? p.literal : p.expression)).join(""),
      uri: parts.map((p) => ("literal" in p ? p.literal : p.value)).join(""),
    }));

    it("on URIs shaped like the template", () => {
      let matched = 0;
      fc.assert(
        fc.property(templateAndUri, ({ template, uri }) => {
          const expected = backtrackingReference(template, uri);
          if (expected) matched += 1;
          expect(matches(template, uri)).toBe(expected);
        }),
        { numRuns: 1000 },
      );
      // The generator reaches both answers, so the agreement says something about each.
      expect(matched).toBeGreaterThan(100);
    });

    it("on unrelated URIs", () => {
      fc.assert(
        fc.property(templateAndUri, text(12), ({ template }, uri) => {
          expect(matches(template, uri)).toBe(backtrackingReference(template, uri));
        }),
        { numRuns: 500 },
      );
    });
  });

  describe("hostile templates answer, however the URI is made", () => {
    const longText = (alphabet: string[]) =>
      fc
        .array(fc.constantFrom(...alphabet), { minLength: 2_000, maxLength: 10_000 })
        .map((chars) => chars.join(""));

    it("x://{+a} repeated 150 to 250 times, with or without a literal after", () => {
      fc.assert(
        fc.property(
          fc.integer({ min: 150, max: 250 }),
          fc.constantFrom("", "z", "/end"),
          fc.constantFrom("x://", "y://"),
          longText(["a", "/", "z", "?", "#", "."]),
          fc.boolean(),
          (repeats, suffix, scheme, rest, endWithSuffix) => {
            const template = `x://${"{+a}".repeat(repeats)}${suffix}`;
            const uri = `${scheme}${rest}${endWithSuffix ? suffix : ""}`;
            const expected = uri.startsWith("x://") && uri.endsWith(suffix);
            expect(matches(template, uri)).toBe(expected);
          },
        ),
        { numRuns: 20 },
      );
    });

    it("x://{a} repeated 150 to 250 times: a URI with that many characters and no separator", () => {
      fc.assert(
        fc.property(
          fc.integer({ min: 150, max: 250 }),
          fc.oneof(longText(["a", "b"]), longText(["a", "b", "/"]), fc.constant("a".repeat(149))),
          (repeats, rest) => {
            const expected = rest.length >= repeats && !/[/?#]/.test(rest);
            expect(matches(`x://${"{a}".repeat(repeats)}`, `x://${rest}`)).toBe(expected);
          },
        ),
        { numRuns: 20 },
      );
    });
  });
});

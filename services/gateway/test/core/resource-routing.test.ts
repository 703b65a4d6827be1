import { describe, expect, it } from "vitest";
import { matchesTemplate, resourceServers } from "../../src/core/resource-routing.js";

describe("resource routing", () => {
  it.each<[string, string, boolean]>([
    ["test://template/{id}/data", "test://template/123/data", true],
    ["test://template/{id}/data", "test://template/1/2/data", false],
    ["test://template/{id}/data", "test://template//data", false],
    ["file:///{+path}", "file:///home/me/notes.md", true],
    ["repo://{owner}/{name}{?ref}", "repo://a/b", true],
    ["repo://{owner}/{name}{?ref}", "repo://a/b?ref=main", true],
    ["docs://{page}", "docs://a.b", true],
    ["docs://static", "docs://static2", false],
  ])("%s matches %s: %s", (template, uri, expected) => {
    expect(matchesTemplate(template, uri)).toBe(expected);
  });

  it("asks the server that listed the URI first, then template owners, then every other server in name order", () => {
    expect(
      resourceServers("demo://x/7", {
        resources: [
          { uri: "demo://a", server: "zeta" },
          { uri: "demo://x/7", server: "mid" },
        ],
        templates: [
          { uriTemplate: "demo://x/{id}", server: "tmpl" },
          { uriTemplate: "other://{id}", server: "alpha" },
        ],
      }),
    ).toEqual(["mid", "tmpl", "alpha", "zeta"]);
  });

  it("asks ready servers no listing names last, in name order", () => {
    expect(
      resourceServers("demo://x", { resources: [{ uri: "demo://a", server: "zeta" }], templates: [] }, [
        "omega",
        "zeta",
        "beta",
      ]),
    ).toEqual(["zeta", "beta", "omega"]);
  });

  it("has no candidate when no server is ready", () => {
    expect(resourceServers("demo://x", { resources: [], templates: [] }, [])).toEqual([]);
  });
});

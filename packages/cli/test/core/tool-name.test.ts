import { type ToolEntry, withExposedNames } from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import { editDistance } from "../../src/core/edit-distance.js";
import { resolveToolName, suggestions } from "../../src/core/tool-name.js";

function entry(server: string, rawName: string, exposure: ToolEntry["exposure"] = "direct"): ToolEntry {
  return {
    server,
    rawName,
    callableNamespace: `mcp__${server}`,
    callableName: rawName,
    flatName: `mcp__${server}__${rawName}`,
    hookName: `mcp__${server}__${rawName}`,
    fingerprint: "0".repeat(64),
    revision: 1,
    description: "",
    inputSchema: { type: "object" },
    supportsParallel: false,
    exposure,
  };
}

/** A catalog as the CLI holds it: every tool, the model's ones named as MCP clients see them. */
const catalog = withExposedNames([
  entry("everything", "echo"),
  entry("everything", "add"),
  entry("everything", "get item"),
  entry("docs", "search"),
  entry("web", "search"),
  entry("fs", "wipe", "hidden"),
]);

const resolved = (typed: string) => {
  const match = resolveToolName(typed, catalog);
  return match.ok ? match.entry.flatName : match.message;
};

describe("resolveToolName", () => {
  it("takes the name MCP clients see, the one `toolbus tools` lists", () => {
    expect(resolved("everything__echo")).toBe("mcp__everything__echo");
  });

  it.each([
    ["the catalog's flat name", "mcp__everything__echo"],
    ["server.tool", "everything.echo"],
    ["server/tool", "everything/echo"],
    ["the raw name that only one server has", "echo"],
    ["a name with spaces around it", "  everything__echo "],
  ])("takes %s", (_spelling, typed) => {
    expect(resolved(typed)).toBe("mcp__everything__echo");
  });

  it("takes server.tool for a raw name the exposed name had to sanitize", () => {
    expect([resolved("everything.get item"), resolved("everything__get_item")]).toEqual([
      "mcp__everything__get item",
      "mcp__everything__get item",
    ]);
  });

  it.each([
    ["the raw name with the listed name's separators", "get_item"],
    ["server.tool with them", "everything.get_item"],
    ["another case", "Everything__Get_Item"],
    ["the listed name's separators as dashes", "everything--get-item"],
  ])("takes %s, when it is the only tool so spelled", (_spelling, typed) => {
    expect(resolved(typed)).toBe("mcp__everything__get item");
  });

  it("passes a hidden tool's flat name on, for the dispatcher to refuse as it does", () => {
    expect(resolved("mcp__fs__wipe")).toBe("mcp__fs__wipe");
  });

  it("refuses a raw name two servers have, naming both tools", () => {
    expect(resolved("search")).toBe(
      '"search" names a tool on 2 servers: docs__search, web__search; call it by one of those names',
    );
  });

  it("refuses an unknown name, suggesting the closest ones", () => {
    expect(resolved("everything__ecko")).toBe(
      'no tool is named "everything__ecko"; did you mean everything__echo? (`toolbus tools` lists every tool)',
    );
    expect(resolved("mcp__everything__missing")).toBe(
      'no tool is named "mcp__everything__missing"; `toolbus tools` lists the tools you can call',
    );
  });
});

describe("suggestions", () => {
  it("ranks by closeness, then by name, at most three, never a hidden tool", () => {
    expect(suggestions("serch", catalog)).toEqual(["docs__search", "web__search"]);
    expect(suggestions("everything", catalog)).toEqual([
      "everything__add",
      "everything__echo",
      "everything__get_item",
    ]);
    expect(suggestions("wipe", catalog)).toEqual([]);
  });

  it("ignores case", () => {
    expect(suggestions("Everything__Echo", catalog)).toEqual(["everything__echo"]);
  });
});

describe("editDistance", () => {
  it.each([
    ["", "", 0],
    ["abc", "", 3],
    ["kitten", "sitting", 3],
    ["echo", "ecko", 1],
    ["ab", "ba", 2],
  ])("%s → %s is %i", (a, b, distance) => {
    expect([editDistance(a, b), editDistance(b, a)]).toEqual([distance, distance]);
  });
});

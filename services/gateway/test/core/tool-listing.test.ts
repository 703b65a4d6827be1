import type { ToolEntry } from "@toolbus/protocol";
import { buildExposedNames } from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import { listedTools, listingKey } from "../../src/core/tool-listing.js";

function entry(rawName: string, change: Partial<ToolEntry> = {}): ToolEntry {
  return {
    server: "docs",
    rawName,
    callableNamespace: "mcp__docs",
    callableName: rawName,
    flatName: `mcp__docs__${rawName}`,
    hookName: `mcp__docs__${rawName}`,
    fingerprint: "0".repeat(64),
    revision: 4,
    description: "Searches.",
    inputSchema: { properties: { q: { type: "string" } } },
    supportsParallel: false,
    exposure: "direct",
    ...change,
  };
}

const key = (entries: ToolEntry[]) => listingKey(listedTools(buildExposedNames(entries, "prefixed")));

describe("tool listing", () => {
  it("lists the reference's resource tools first when offered, read-only (§8)", () => {
    const table = buildExposedNames([entry("search")], "prefixed");
    expect(listedTools(table, true).map((tool) => tool.name)).toEqual([
      "list_mcp_resources",
      "list_mcp_resource_templates",
      "read_mcp_resource",
      "docs__search",
    ]);
    expect(listedTools(table, true)[2]).toEqual({
      name: "read_mcp_resource",
      description: "Read a specific resource from an MCP server given the server name and resource URI.",
      inputSchema: {
        type: "object",
        properties: {
          server: {
            type: "string",
            description:
              "MCP server name exactly as configured. Must match the 'server' field returned by list_mcp_resources.",
          },
          uri: {
            type: "string",
            description: "Resource URI to read. Must be one of the URIs returned by list_mcp_resources.",
          },
        },
        required: ["server", "uri"],
        additionalProperties: false,
      },
      annotations: { readOnlyHint: true },
    });
    expect(listedTools(table).map((tool) => tool.name)).toEqual(["docs__search"]);
  });

  it("lists the exposed name with title, description, schemas and annotations, the root typed object", () => {
    const listed = listedTools(
      buildExposedNames(
        [
          entry("search", {
            title: "Search",
            outputSchema: { type: "object", properties: {} },
            annotations: { readOnlyHint: true },
          }),
        ],
        "prefixed",
      ),
    );
    expect(listed).toEqual([
      {
        name: "docs__search",
        title: "Search",
        description: "Searches.",
        inputSchema: { type: "object", properties: { q: { type: "string" } } },
        outputSchema: { type: "object", properties: {} },
        annotations: { readOnlyHint: true },
      },
    ]);
  });

  it.each<[string, ToolEntry[], ToolEntry[], boolean]>([
    ["unchanged when only revisions moved", [entry("search")], [entry("search", { revision: 9 })], false],
    [
      "unchanged when a server re-listed the same tools in another order",
      [entry("a"), entry("b")],
      [entry("b"), entry("a")],
      false,
    ],
    [
      "changed when a description changed",
      [entry("search")],
      [entry("search", { description: "New." })],
      true,
    ],
    ["changed when a tool was added", [entry("search")], [entry("search"), entry("fetch")], true],
    ["changed when an input schema changed", [entry("search")], [entry("search", { inputSchema: {} })], true],
  ])("the listing is %s", (_rule, before, after, changed) => {
    expect(key(before) !== key(after)).toBe(changed);
  });
});

import { describe, expect, it } from "vitest";
import { acceptTools, isToolAllowed } from "../../src/core/tool-filter.js";

const tool = (name: string) => ({ name, inputSchema: { type: "object" } });

describe("tool filter", () => {
  it.each([
    { name: "[4] no lists keep every tool", filter: {}, kept: ["a", "b-x", "c"] },
    { name: "enabled_tools keeps only those", filter: { enabledTools: ["a", "c"] }, kept: ["a", "c"] },
    { name: "disabled_tools drops those", filter: { disabledTools: ["b-x"] }, kept: ["a", "c"] },
    {
      name: "[4] the deny-list wins over the allow-list",
      filter: { enabledTools: ["a"], disabledTools: ["a"] },
      kept: [],
    },
    { name: "an empty allow-list keeps nothing", filter: { enabledTools: [] }, kept: [] },
    { name: "[4] names are raw, not sanitized", filter: { enabledTools: ["b_x"] }, kept: [] },
  ])("$name", ({ filter, kept }) => {
    const names = ["a", "b-x", "c"];
    expect(acceptTools(names.map(tool), filter)).toEqual({
      accepted: kept.map(tool),
      rejected: [],
      unconvertible: [],
    });
    expect(names.filter((name) => isToolAllowed(filter, name))).toEqual(kept);
  });

  it("leaves malformed tools out with the reason, keeping the well-formed ones in listed order", () => {
    const listed = [tool("z"), { name: "no-schema" }, 42, { inputSchema: {} }, tool("a")];
    const { accepted, rejected } = acceptTools(listed, {});
    expect(accepted).toEqual([tool("z"), tool("a")]);
    expect(rejected).toEqual([
      expect.stringMatching(/^tool "no-schema": .*inputSchema/),
      expect.stringMatching(/^a tool without a name: /),
      expect.stringMatching(/^a tool without a name: .*name/),
    ]);
  });

  it("warns as the reference does about allowed tools no model can be shown, keeping only null-root ones", () => {
    const nullRoot = { name: "nothing", inputSchema: { type: "null" } };
    const listed = [
      tool("fine"),
      nullRoot,
      { name: "no-object", inputSchema: null },
      { name: "list-schema", inputSchema: [] },
      { name: "hidden", inputSchema: null },
    ];
    expect(acceptTools(listed, { disabledTools: ["hidden"] })).toEqual({
      accepted: [tool("fine"), nullRoot],
      rejected: [],
      unconvertible: [
        "Failed to convert `nothing` MCP tool to OpenAI tool: tool input schema must not be a singleton null type",
        "Failed to convert `no-object` MCP tool to OpenAI tool: the input schema is null, not a JSON object",
        "Failed to convert `list-schema` MCP tool to OpenAI tool: the input schema is an array, not a JSON object",
      ],
    });
  });
});

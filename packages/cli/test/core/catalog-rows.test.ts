import { type ToolEntry, withExposedNames } from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import { toolColumns, toolRows } from "../../src/core/catalog-rows.js";
import { renderTable } from "../../src/core/table.js";

function entry(rawName: string, description: string): ToolEntry {
  return {
    server: "everything",
    rawName,
    callableNamespace: "mcp__everything",
    callableName: rawName,
    flatName: `mcp__everything__${rawName}`,
    hookName: `mcp__everything__${rawName}`,
    fingerprint: "0".repeat(64),
    revision: 1,
    description,
    inputSchema: { type: "object" },
    supportsParallel: false,
    exposure: "direct",
  };
}

// Names and descriptions as long as the demo server's.
const DEMO = withExposedNames([
  entry("echo", "Echoes back the input string"),
  entry(
    "trigger-long-running-operation",
    "Demonstrates a long running operation with progress updates. Use this tool to test progress notifications.",
  ),
  entry(
    "get-resource-reference",
    "Returns a resource reference that can be used by MCP clients, with a link to the resource and its contents.",
  ),
]);

describe("the tools table", () => {
  it("gives the description all the width the name and server leave, at 120 columns", () => {
    const lines = renderTable(toolColumns(false), toolRows(DEMO, false), { maxWidth: 120 });
    const nameWidth = "everything__trigger_long_running_operation".length;
    const descriptionWidth = 120 - nameWidth - 2 - "everything".length - 2;
    expect(lines[0]).toBe(`${"name".padEnd(nameWidth)}  server      description`);
    expect(lines.map((line) => [...line].length)).toEqual([expect.any(Number), expect.any(Number), 120, 120]);
    expect(lines[2]).toBe(
      `everything__trigger_long_running_operation  everything  ${DEMO[1]!.description.slice(0, descriptionWidth - 1)}…`,
    );
    expect(lines[1]).toBe(
      `${"everything__echo".padEnd(nameWidth)}  everything  Echoes back the input string`,
    );
  });

  it("shows how each tool reaches the model only in the listing of every tool", () => {
    expect([toolColumns(false).length, toolColumns(true).map((column) => column.header)]).toEqual([
      3,
      ["name", "server", "description", "exposure"],
    ]);
    expect(toolRows(DEMO.slice(0, 1), true)).toEqual([
      ["everything__echo", "everything", "Echoes back the input string", "direct"],
    ]);
  });
});

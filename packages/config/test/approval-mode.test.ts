import { describe, expect, it } from "vitest";
import { effectiveApprovalMode } from "../src/approval-mode.js";
import { parseToolbusToml } from "../src/toolbus-toml.js";

const server = (toml: string) => {
  const config = parseToolbusToml(`[mcp_servers.docs]\ncommand = "srv"\n${toml}`, {
    path: "/x/toolbus.toml",
  });
  return config.mcpServers.docs!;
};

describe("effective approval mode (tool > server default > auto, checklist 33)", () => {
  it.each([
    ["nothing set", "", "search", "auto"],
    ["a server default", 'default_tools_approval_mode = "prompt"', "search", "prompt"],
    [
      "a tool override over the server default",
      'default_tools_approval_mode = "prompt"\n[mcp_servers.docs.tools.search]\napproval_mode = "approve"',
      "search",
      "approve",
    ],
    [
      "another tool's override",
      'default_tools_approval_mode = "writes"\n[mcp_servers.docs.tools.search]\napproval_mode = "approve"',
      "fetch",
      "writes",
    ],
    ["a tool table without a mode", "[mcp_servers.docs.tools.search]", "search", "auto"],
    ["a tool named like an Object property", "", "constructor", "auto"],
  ])("with %s, `%s`", (_, toml, tool, expected) => {
    expect(effectiveApprovalMode(server(toml), tool)).toBe(expected);
  });
});

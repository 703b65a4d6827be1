import { describe, expect, it } from "vitest";
import { configLine, failedLines } from "../src/core/banner.js";

describe("the start banner", () => {
  it("names the configuration file in use, or says the demo runs and how to use one's own", () => {
    expect([
      configLine({ kind: "file", path: "/work/app/.mcp.json", format: "mcp_json" }),
      configLine({ kind: "demo" }),
    ]).toEqual([
      "  config         /work/app/.mcp.json",
      "  config         the demo (server-everything): write a toolbus.toml or a .mcp.json here, or pass --config",
    ]);
  });

  it("names each failed server with its error on one line and the next step", () => {
    expect(failedLines({ failed: [{ server: "files", error: "spawn npx ENOENT\n  at spawn" }] })).toEqual([
      "  failed         files: spawn npx ENOENT at spawn (fix its [mcp_servers.files] table and start again; `toolbus servers` shows its status)",
    ]);
  });
});

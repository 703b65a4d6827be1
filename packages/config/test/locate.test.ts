import { describe, expect, it } from "vitest";
import { demoConfig } from "../src/demo.js";
import { applyEnvOverrides, configFormat, locateConfig } from "../src/locate.js";
import { problemsOf } from "./problems-of.js";

const cwd = "/work/app";
const exists = (present: string[]) => (path: string) => present.includes(path);

describe("which config file is loaded", () => {
  it.each([
    [
      "--config first",
      { path: "conf/a.toml", env: { TOOLBUS_CONFIG: "/etc/b.toml" } },
      ["/work/app/toolbus.toml"],
      { kind: "file", path: "/work/app/conf/a.toml", namedBy: "--config" },
    ],
    [
      "TOOLBUS_CONFIG next",
      { env: { TOOLBUS_CONFIG: "/etc/b.json" } },
      ["/work/app/toolbus.toml"],
      { kind: "file", path: "/etc/b.json", namedBy: "TOOLBUS_CONFIG" },
    ],
    [
      "an empty TOOLBUS_CONFIG as unset",
      { env: { TOOLBUS_CONFIG: "" } },
      ["/work/app/toolbus.toml"],
      { kind: "file", path: "/work/app/toolbus.toml", namedBy: "default" },
    ],
    [
      "./toolbus.toml when it exists",
      { env: {} },
      ["/work/app/toolbus.toml"],
      { kind: "file", path: "/work/app/toolbus.toml", namedBy: "default" },
    ],
    [
      "./toolbus.toml before a ./.mcp.json",
      { env: {} },
      ["/work/app/.mcp.json", "/work/app/toolbus.toml"],
      { kind: "file", path: "/work/app/toolbus.toml", namedBy: "default" },
    ],
    [
      "./.mcp.json when there is no toolbus.toml",
      { env: {} },
      ["/work/app/.mcp.json"],
      { kind: "file", path: "/work/app/.mcp.json", namedBy: "default" },
    ],
    ["the demo otherwise", { env: {} }, [], { kind: "demo" }],
  ])("takes %s", (_, options, present, expected) => {
    expect(locateConfig({ ...options, cwd }, exists(present))).toEqual(expected);
  });

  it.each([
    ["/x/.mcp.json", "mcp_json"],
    ["/x/claude_desktop_config.JSON", "mcp_json"],
    ["/x/toolbus.toml", "toml"],
    ["/x/toolbus.conf", "toml"],
  ])("reads %s as %s", (path, format) => {
    expect(configFormat(path)).toBe(format);
  });
});

describe("environment overrides", () => {
  const demo = demoConfig({ command: "node", args: ["everything.js"] });

  it("takes the gateway port from TOOLBUS_HTTP_PORT", () => {
    expect(applyEnvOverrides(demo, { TOOLBUS_HTTP_PORT: "9000" })).toEqual({
      ...demo,
      gateway: { ...demo.gateway, port: 9000 },
    });
  });

  it("leaves the config alone without TOOLBUS_HTTP_PORT", () => {
    expect(applyEnvOverrides(demo, {})).toBe(demo);
  });

  it.each(["http", "70000", "-1", "80.5"])("rejects TOOLBUS_HTTP_PORT=%s", (port) => {
    expect(problemsOf(() => applyEnvOverrides(demo, { TOOLBUS_HTTP_PORT: port }))).toEqual([
      { at: "", message: `must be a port from 0 to 65535, got ${JSON.stringify(port)}` },
    ]);
  });
});

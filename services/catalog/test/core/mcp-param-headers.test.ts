// The Mcp-Param-* headers toolbus sends a 2026-07-28 server's tools/call, from that server's own
// listing (SEP-2243).
import { describe, expect, it } from "vitest";
import { McpParamMirror } from "../../src/core/mcp-param-headers.js";

const route = {
  name: "route",
  inputSchema: {
    type: "object",
    properties: {
      region: { type: "string", "x-mcp-header": "Region" },
      priority: { type: "integer", "x-mcp-header": "Priority" },
      query: { type: "string" },
    },
  },
};

describe("McpParamMirror", () => {
  it("gives a listed tool's call its headers, by the tool's raw name", () => {
    const mirror = new McpParamMirror();
    mirror.listed([route, { name: "plain", inputSchema: { type: "object" } }]);
    expect({
      route: mirror.headersFor("route", { region: " padded ", priority: 3, query: "q" }),
      plain: mirror.headersFor("plain", { region: "eu" }),
      unknown: mirror.headersFor("other", { region: "eu" }),
    }).toEqual({
      route: { "Mcp-Param-Region": "=?base64?IHBhZGRlZCA=?=", "Mcp-Param-Priority": "3" },
      plain: {},
      unknown: {},
    });
  });

  it("sends none for a tool whose annotations are invalid, nor for null or absent arguments", () => {
    const mirror = new McpParamMirror();
    mirror.listed([
      route,
      {
        name: "bad",
        inputSchema: { type: "object", properties: { s: { type: "number", "x-mcp-header": "S" } } },
      },
      "not a tool",
    ]);
    expect([mirror.headersFor("bad", { s: 1 }), mirror.headersFor("route", { region: null })]).toEqual([
      {},
      {},
    ]);
  });

  it("follows the latest listing: a tool dropped or changed since is called by what the server lists now", () => {
    const mirror = new McpParamMirror();
    mirror.listed([route]);
    mirror.listed([
      {
        name: "route",
        inputSchema: { type: "object", properties: { region: { type: "string", "x-mcp-header": "Zone" } } },
      },
    ]);
    expect(mirror.headersFor("route", { region: "eu", priority: 1 })).toEqual({ "Mcp-Param-Zone": "eu" });
    mirror.listed([]);
    expect(mirror.headersFor("route", { region: "eu" })).toEqual({});
  });
});

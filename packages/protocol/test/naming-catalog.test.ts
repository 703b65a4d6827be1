import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  type CatalogInput,
  type NamingOptions,
  normalizeCatalog,
  type RawTool,
} from "../src/naming/index.js";

// The oracle for hashes is the rule itself (§3.3), computed here independently of the code.
const hash = (input: string) => `_${createHash("sha1").update(input, "utf8").digest("hex").slice(0, 12)}`;
const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");
const toolIdOf = (server: string, name: string, connectorId = "") =>
  `${server}\0${server}\0${connectorId}\0${name}\0${name}`;

const tool = (name: string): RawTool => ({ name, inputSchema: { type: "object" } });
const input = (server: string, name: string): CatalogInput => ({ server, tool: tool(name) });

function names(inputs: CatalogInput[], options?: NamingOptions) {
  return normalizeCatalog(inputs, options).tools.map((t) => ({
    server: t.server,
    rawName: t.rawName,
    callableNamespace: t.callableNamespace,
    callableName: t.callableName,
    flatName: t.flatName,
  }));
}

const named = (server: string, rawName: string, callableNamespace: string, callableName: string) => ({
  server,
  rawName,
  callableNamespace,
  callableName,
  flatName: `${callableNamespace}__${callableName}`,
});

describe("normalizeCatalog", () => {
  it("[16] returns the whole normalized tool, with the raw route kept for the wire", () => {
    const raw: RawTool = {
      name: "tool.two-three",
      description: "Does two things.",
      inputSchema: { type: "object" },
      _meta: { connector_id: "evil", connector_name: "Evil", "openai/outputTemplate": "ui://x" },
    };
    const { tools, warnings } = normalizeCatalog([{ server: "server.one", tool: raw }]);

    expect(warnings).toEqual([]);
    expect(tools).toEqual([
      {
        server: "server.one",
        rawName: "tool.two-three",
        callableNamespace: "mcp__server_one",
        callableName: "tool_two_three",
        flatName: "mcp__server_one__tool_two_three",
        hookName: "mcp__server_one__tool_two_three",
        fingerprint: sha256(
          '{"description":"Does two things.","inputSchema":{"type":"object"},"name":"tool.two-three"}',
        ),
        tool: {
          name: "tool.two-three",
          description: "Does two things.",
          inputSchema: { type: "object" },
          _meta: { "openai/outputTemplate": "ui://x" },
        },
        toolId: toolIdOf("server.one", "tool.two-three"),
      },
    ]);
  });

  it.each([
    {
      rule: "[15] every namespace gets the mcp__ prefix by default",
      inputs: [input("srv", "foo")],
      options: {},
      expected: [named("srv", "foo", "mcp__srv", "foo")],
    },
    {
      rule: "[15] a server that opts out keeps its bare namespace",
      inputs: [input("srv", "foo"), input("calendar", "list")],
      options: { nonPrefixedServers: ["srv"] },
      expected: [named("calendar", "list", "mcp__calendar", "list"), named("srv", "foo", "srv", "foo")],
    },
    {
      rule: "prefixing switched off leaves every namespace bare",
      inputs: [input("history", "search"), input("calendar", "list")],
      options: { prefixMcp: false },
      expected: [
        named("calendar", "list", "calendar", "list"),
        named("history", "search", "history", "search"),
      ],
    },
    {
      rule: "[15] an existing mcp__ prefix is not doubled",
      inputs: [input("mcp__srv", "foo")],
      options: {},
      expected: [named("mcp__srv", "foo", "mcp__srv", "foo")],
    },
    {
      rule: "[16] dots and dashes become underscores, case is kept",
      inputs: [input("server.one", "tool.two-three"), input("Music-Studio", "Get-Guide")],
      options: {},
      expected: [
        named("Music-Studio", "Get-Guide", "mcp__Music_Studio", "Get_Guide"),
        named("server.one", "tool.two-three", "mcp__server_one", "tool_two_three"),
      ],
    },
    {
      rule: "each non-ASCII char becomes one underscore and an empty name becomes _",
      inputs: [input("日本", ""), input("a b", "✓ ok")],
      options: {},
      expected: [named("a b", "✓ ok", "mcp__a_b", "__ok"), named("日本", "", "mcp____", "_")],
    },
  ])("$rule", ({ inputs, options, expected }) => {
    expect(names(inputs, options)).toEqual(expected);
  });

  it("[17] drops a repeated tool identity with a warning and keeps the first", () => {
    const first: CatalogInput = { server: "server1", tool: { name: "dup", description: "first" } };
    const second: CatalogInput = { server: "server1", tool: { name: "dup", description: "second" } };

    const { tools, warnings } = normalizeCatalog([first, second]);

    expect(warnings).toEqual(["skipping duplicated tool dup"]);
    expect(tools.map((t) => t.tool)).toEqual([{ name: "dup", description: "first" }]);
  });

  it("keeps the same tool name from two connectors of one server apart", () => {
    const { tools, warnings } = normalizeCatalog([
      { server: "apps", tool: tool("search"), connectorId: "calendar" },
      { server: "apps", tool: tool("search"), connectorId: "mail" },
    ]);

    expect(warnings).toEqual([]);
    // The connector is part of the namespace identity, so the two namespaces collide.
    expect(tools.map((t) => [t.flatName, t.connectorId])).toEqual([
      [`mcp__apps${hash("apps\0apps\0calendar")}__search`, "calendar"],
      [`mcp__apps${hash("apps\0apps\0mail")}__search`, "mail"],
    ]);
  });

  it("[17] gives namespaces that collide after sanitizing a hash of their raw identity", () => {
    const result = names([
      input("basic-server", "lookup"),
      input("basic_server", "query"),
      input("npm:@scope/package.name", "lookup"),
      input("npm__scope_package_name", "lookup"),
    ]);
    const ns = (server: string) => `${server}\0${server}\0`;

    expect(result).toEqual([
      named("basic-server", "lookup", `mcp__basic_server${hash(ns("basic-server"))}`, "lookup"),
      named("basic_server", "query", `mcp__basic_server${hash(ns("basic_server"))}`, "query"),
      named(
        "npm:@scope/package.name",
        "lookup",
        `mcp__npm__scope_package_name${hash(ns("npm:@scope/package.name"))}`,
        "lookup",
      ),
      named(
        "npm__scope_package_name",
        "lookup",
        `mcp__npm__scope_package_name${hash(ns("npm__scope_package_name"))}`,
        "lookup",
      ),
    ]);
  });

  it("puts a namespace hash before a trailing __", () => {
    const result = names([input("cal--", "a"), input("cal__", "b")]);
    const ns = (server: string) => `${server}\0${server}\0`;

    expect(result).toEqual([
      named("cal--", "a", `mcp__cal${hash(ns("cal--"))}__`, "a"),
      named("cal__", "b", `mcp__cal${hash(ns("cal__"))}__`, "b"),
    ]);
  });

  it("[17] gives tool names that collide after sanitizing a hash of their raw identity", () => {
    expect(names([input("server", "tool-name"), input("server", "tool_name")])).toEqual([
      named("server", "tool-name", "mcp__server", `tool_name${hash(toolIdOf("server", "tool-name"))}`),
      named("server", "tool_name", "mcp__server", `tool_name${hash(toolIdOf("server", "tool_name"))}`),
    ]);
  });

  describe.each([64, 128])("with a name limit of %i bytes", (limit) => {
    const namespace = "mcp__codex_apps";
    const roomForName = limit - namespace.length - 2;

    it("[18] keeps a flat name of exactly the limit unchanged", () => {
      const name = "a".repeat(roomForName);

      expect(names([input("codex_apps", name)], { nameLimit: limit })).toEqual([
        named("codex_apps", name, namespace, name),
      ]);
    });

    it("[18] hashes a flat name one byte over the limit to exactly the limit", () => {
      const name = "a".repeat(roomForName + 1);
      const [result] = names([input("codex_apps", name)], { nameLimit: limit });
      const hashed = `${"a".repeat(roomForName - 13)}${hash(toolIdOf("codex_apps", name))}`;

      expect(result).toEqual(named("codex_apps", name, namespace, hashed));
      expect(result?.flatName.length).toBe(limit);
    });

    it("cuts a namespace that leaves no room for a hash, and the name becomes the hash", () => {
      const server = "s".repeat(limit);
      const [result] = names([input(server, "tool")], { nameLimit: limit });
      const cut = `mcp__${server}`.slice(0, limit - 15);

      expect(result).toEqual(named(server, "tool", cut, hash(toolIdOf(server, "tool"))));
      expect(result?.flatName.length).toBe(limit);
    });

    it("hashes two long names of one server to distinct names of exactly the limit", () => {
      const result = names(
        [input("my_server", "b".repeat(limit * 2)), input("my_server", "a".repeat(limit * 2))],
        { nameLimit: limit },
      );

      expect(result.map((t) => [t.callableNamespace, t.flatName.length])).toEqual([
        ["mcp__my_server", limit],
        ["mcp__my_server", limit],
      ]);
      expect(result[0]?.flatName).not.toBe(result[1]?.flatName);
    });
  });

  it("[18] sorts the output by raw identity bytewise, whatever the input order", () => {
    const inputs = [input("b", "x"), input("a", "z"), input("a", "y"), input("é", "x"), input("😀", "x")];
    const expected = [
      named("a", "y", "mcp__a", "y"),
      named("a", "z", "mcp__a", "z"),
      named("b", "x", "mcp__b", "x"),
      // Both sanitize to `mcp___`, which ends in `__`, so the hash goes before it.
      named("é", "x", `mcp_${hash("é\0é\0")}__`, "x"),
      named("😀", "x", `mcp_${hash("😀\0😀\0")}__`, "x"),
    ];

    expect(names(inputs)).toEqual(expected);
    expect(names([...inputs].reverse())).toEqual(expected);
  });

  it("orders a char above U+FFFF after U+FFFD, as UTF-8 bytes do", () => {
    // UTF-16 code units would put the surrogate pair of 😀 (0xD83D) before U+FFFD.
    const result = names([input("srv", "😀"), input("srv", "\uFFFD")]);

    expect(result.map((t) => t.rawName)).toEqual(["\uFFFD", "😀"]);
  });

  it("tries the next attempt's hash when the first hashed name is taken", () => {
    const longName = "b".repeat(100);
    const longId = toolIdOf("s", longName);
    // A tool literally named like the long tool's first hashed form sorts first and keeps it.
    const squatter = `${"b".repeat(64 - 6 - 2 - 13)}${hash(longId)}`;

    expect(names([input("s", longName), input("s", squatter)])).toEqual([
      named("s", squatter, "mcp__s", squatter),
      named("s", longName, "mcp__s", `${"b".repeat(43)}${hash(`${longId}\u00001`)}`),
    ]);
  });

  it("makes flat names unique even where the delimiter-less names differ", () => {
    // Codex keys uniqueness on `ns + name`; `a__b` + `c` and `a` + `b__c` differ there but
    // share the flat name `a__b__c`, which docs/contract.md requires to be unique.
    const result = names([input("a__b", "c"), input("a", "b__c")], { prefixMcp: false });

    expect(result).toEqual([
      named("a", "b__c", "a", "b__c"),
      named("a__b", "c", "a__b", `c${hash(toolIdOf("a__b", "c"))}`),
    ]);
  });

  it.each([19, 0, -5, 20.5, Number.NaN])("rejects a name limit of %s", (nameLimit) => {
    expect(() => normalizeCatalog([], { nameLimit })).toThrowError(
      new Error(
        `nameLimit must be an integer of at least 20 bytes, got ${nameLimit}: a flat name needs room for a ` +
          `namespace, "__" and a 13-character hash. Set [catalog] name_limit to 20 or more ` +
          "(64 is the default, 128 matches Codex).",
      ),
    );
  });

  it("accepts the smallest name limit, 20", () => {
    const result = names([input("a-very-long-server-name", "a-very-long-tool-name")], { nameLimit: 20 });

    expect(result.map((t) => t.flatName.length)).toEqual([20]);
  });
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  buildExposedNames,
  EXPOSED_NAME_PATTERN,
  exposeNames,
  type NamingMode,
  type ToolEntry,
  withExposedNames,
} from "../src/index.js";

function entry(server: string, rawName: string): ToolEntry {
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
    exposure: "direct",
  };
}

function names(entries: ToolEntry[], mode: NamingMode): Array<[string, string, string]> {
  return buildExposedNames(entries, mode).tools.map((tool) => [
    tool.exposedName,
    tool.entry.server,
    tool.entry.rawName,
  ]);
}

describe("exposed names", () => {
  it.each<[string, NamingMode, ToolEntry[], Array<[string, string, string]>]>([
    [
      "prefixes every tool with its server",
      "prefixed",
      [entry("github", "create_issue"), entry("fs", "read")],
      [
        ["fs__read", "fs", "read"],
        ["github__create_issue", "github", "create_issue"],
      ],
    ],
    [
      "sanitizes characters MCP clients reject",
      "prefixed",
      [entry("my-server", "tool.two-three")],
      [["my_server__tool_two_three", "my-server", "tool.two-three"]],
    ],
    [
      "never adds the mcp__ prefix clients add themselves",
      "prefixed",
      [entry("mcp__x", "t")],
      [["mcp__x__t", "mcp__x", "t"]],
    ],
    [
      "keeps a valid raw name that no other server has, in conditional mode",
      "conditional",
      [entry("a", "search"), entry("b", "get-page")],
      [
        ["search", "a", "search"],
        ["get-page", "b", "get-page"],
      ],
    ],
    [
      "prefixes raw names two servers share, in conditional mode",
      "conditional",
      [entry("a", "echo"), entry("b", "echo"), entry("b", "only_b")],
      [
        ["a__echo", "a", "echo"],
        ["b__echo", "b", "echo"],
        ["only_b", "b", "only_b"],
      ],
    ],
    [
      "prefixes a raw name that is not a valid MCP tool name, in conditional mode",
      "conditional",
      [entry("a", "has space"), entry("a", "x".repeat(65))],
      [
        ["a__has_space", "a", "has space"],
        [`a__${"x".repeat(48)}_a61d4909d547`, "a", "x".repeat(65)],
      ],
    ],
    [
      "moves a prefixed name aside when a kept raw name already took it",
      "conditional",
      // z's raw `a__x` is kept; a's prefixed `a__x` gets `_` + 12 hex of SHA-1("a\0x").
      [entry("a", "x"), entry("b", "x"), entry("z", "a__x")],
      [
        ["a__x_c0d67a9de795", "a", "x"],
        ["b__x", "b", "x"],
        ["a__x", "z", "a__x"],
      ],
    ],
  ])("%s", (_rule, mode, entries, expected) => {
    expect(names(entries, mode)).toEqual(expected);
  });

  it("resolves an exposed name to its catalog entry and nothing else", () => {
    const github = entry("github", "create_issue");
    const table = buildExposedNames([github, entry("fs", "read")], "prefixed");
    expect([
      table.resolve("github__create_issue"),
      table.resolve("create_issue"),
      table.resolve("github"),
    ]).toEqual([github, undefined, undefined]);
  });

  it("gives readers without a gateway (the CLI) the names a prefixed gateway lists, and hidden tools none", () => {
    const hidden = { ...entry("fs", "wipe"), exposure: "hidden" as const };
    const named = withExposedNames([entry("everything", "echo"), entry("my.srv", "get item"), hidden]);
    expect(named.map((tool) => [tool.flatName, tool.exposedName])).toEqual([
      ["mcp__everything__echo", "everything__echo"],
      ["mcp__my.srv__get item", "my_srv__get_item"],
      ["mcp__fs__wipe", undefined],
    ]);
    const gateway = buildExposedNames([entry("everything", "echo"), entry("my.srv", "get item")], "prefixed");
    expect(gateway.tools.map((tool) => tool.exposedName).sort()).toEqual(
      named.flatMap((tool) => (tool.exposedName ? [tool.exposedName] : [])).sort(),
    );
  });

  it("never gives a catalog tool a reserved name (the resource tools), in conditional mode either", () => {
    const reserved = new Set(["read_mcp_resource"]);
    const table = buildExposedNames(
      [entry("docs", "read_mcp_resource"), entry("docs", "search")],
      "conditional",
      reserved,
    );
    expect(table.tools.map((tool) => tool.exposedName)).toEqual(["docs__read_mcp_resource", "search"]);
    expect(table.resolve("read_mcp_resource")).toBeUndefined();
  });

  it("names prompts by the same rule, in a namespace of their own", () => {
    const prompts = [
      { server: "docs", rawName: "summarize", text: "docs' prompt" },
      { server: "notes", rawName: "summarize", text: "notes' prompt" },
      { server: "notes", rawName: "echo", text: "named like a tool" },
    ];
    const table = exposeNames(prompts, "conditional");
    expect(table.items.map(({ exposedName, item }) => [exposedName, item.text])).toEqual([
      ["docs__summarize", "docs' prompt"],
      ["echo", "named like a tool"],
      ["notes__summarize", "notes' prompt"],
    ]);
    expect(table.resolve("notes__summarize")).toBe(prompts[1]);
  });

  const catalog = fc.uniqueArray(
    fc.record({
      server: fc.stringMatching(/^[a-zA-Z0-9_-]{1,40}$/),
      rawName: fc.oneof(
        fc.stringMatching(/^[a-zA-Z0-9_.-]{1,80}$/),
        fc.string({ minLength: 1, maxLength: 70 }),
      ),
    }),
    { selector: (tool) => `${tool.server}\u0000${tool.rawName}`, maxLength: 30 },
  );

  it.each<NamingMode>(["prefixed", "conditional"])(
    "gives every tool a valid, unique name that resolves back to it (%s)",
    (mode) => {
      fc.assert(
        fc.property(catalog, (tools) => {
          const entries = tools.map((tool) => entry(tool.server, tool.rawName));
          const table = buildExposedNames(entries, mode);
          const exposed = table.tools.map((tool) => tool.exposedName);
          expect(exposed.every((name) => EXPOSED_NAME_PATTERN.test(name))).toBe(true);
          expect(new Set(exposed).size).toBe(entries.length);
          for (const tool of table.tools) expect(table.resolve(tool.exposedName)).toBe(tool.entry);
        }),
      );
    },
  );

  it.each<NamingMode>(["prefixed", "conditional"])(
    "names the same catalog the same in any order (%s)",
    (mode) => {
      fc.assert(
        fc.property(
          catalog.chain((tools) =>
            fc.tuple(fc.constant(tools), fc.shuffledSubarray(tools, { minLength: tools.length })),
          ),
          ([tools, shuffled]) => {
            const named = (list: typeof tools) =>
              names(
                list.map((tool) => entry(tool.server, tool.rawName)),
                mode,
              );
            expect(named(shuffled)).toEqual(named(tools));
          },
        ),
      );
    },
  );
});

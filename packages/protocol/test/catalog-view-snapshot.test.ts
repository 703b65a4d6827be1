import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  buildCatalogSnapshot,
  type CatalogServerEntry,
  searchCatalog,
  type Tool,
  toolFingerprint,
} from "../src/index.js";
import { referenceSnapshot } from "./naming-reference.js";

const entry = (
  server: string,
  tools: Tool[],
  extra: Partial<CatalogServerEntry> = {},
): CatalogServerEntry => ({
  server,
  status: "ready",
  required: false,
  revision: 3,
  origin: "stdio",
  tools,
  resourcesSupported: false,
  listedAt: "2026-01-01T00:00:00.000Z",
  ...extra,
});

const plain: Tool = { name: "list-files", description: "Lists files.", inputSchema: { type: "object" } };
const appOnly: Tool = {
  name: "open-app",
  inputSchema: { type: "object" },
  _meta: { ui: { visibility: ["app"] } },
};
const noInput: Tool = { name: "never", inputSchema: { type: "null" } };

describe("buildCatalogSnapshot", () => {
  it("returns every member of a tool entry, optional ones only when the tool has them, in schema order", () => {
    const full: Tool = {
      name: "get-issue",
      title: "Get issue",
      description: "Reads one issue.",
      inputSchema: { type: "object", properties: { id: { type: "string" } } },
      outputSchema: { type: "object" },
      annotations: { readOnlyHint: true },
    };
    const snapshot = buildCatalogSnapshot([entry("tracker", [full, plain])], { naming: {}, revision: 9 });

    expect(snapshot.tools).toStrictEqual([
      {
        server: "tracker",
        rawName: "get-issue",
        callableNamespace: "mcp__tracker",
        callableName: "get_issue",
        flatName: "mcp__tracker__get_issue",
        hookName: "mcp__tracker__get_issue",
        fingerprint: toolFingerprint(full),
        revision: 3,
        title: "Get issue",
        description: "Reads one issue.",
        inputSchema: { type: "object", properties: { id: { type: "string" } } },
        outputSchema: { type: "object" },
        annotations: { readOnlyHint: true },
        readOnlyHint: true,
        supportsParallel: true,
        exposure: "direct",
      },
      {
        server: "tracker",
        rawName: "list-files",
        callableNamespace: "mcp__tracker",
        callableName: "list_files",
        flatName: "mcp__tracker__list_files",
        hookName: "mcp__tracker__list_files",
        fingerprint: toolFingerprint(plain),
        revision: 3,
        description: "Lists files.",
        inputSchema: { type: "object", properties: {} },
        supportsParallel: false,
        exposure: "direct",
      },
    ]);
    // The wire carries JSON, so member order is part of the reply's bytes.
    expect(Object.keys(snapshot.tools[0] ?? {})).toEqual([
      ...["server", "rawName", "callableNamespace", "callableName", "flatName", "hookName", "fingerprint"],
      ...["revision", "title", "description", "inputSchema", "outputSchema", "annotations", "readOnlyHint"],
      ...["supportsParallel", "exposure"],
    ]);
  });

  it.each([
    {
      view: "the model view leaves out app-only tools and tools without callable input",
      options: { exposure: "model" as const },
      expected: [["mcp__srv__list_files", "direct"]],
    },
    {
      view: "the full view keeps app-only tools as hidden, still without uncallable ones",
      options: { exposure: "all" as const },
      expected: [
        ["mcp__srv__list_files", "direct"],
        ["mcp__srv__open_app", "hidden"],
      ],
    },
    {
      view: "tool search defers every visible tool",
      options: { exposure: "all" as const, searchEnabled: true },
      expected: [
        ["mcp__srv__list_files", "deferred"],
        ["mcp__srv__open_app", "hidden"],
      ],
    },
  ])("$view", ({ options, expected }) => {
    const snapshot = buildCatalogSnapshot([entry("srv", [noInput, appOnly, plain])], {
      naming: {},
      revision: 1,
      ...options,
    });

    expect(snapshot.tools.map((t) => [t.flatName, t.exposure])).toEqual(expected);
  });

  it("lists direct and deferred flat names by each server's omit_tools_from", () => {
    const snapshot = buildCatalogSnapshot(
      [
        entry("searchable", [plain]),
        entry("pinned", [plain], { omitToolsFrom: ["deferred"] }),
        entry("code", [plain], { omitToolsFrom: ["deferred", "direct"] }),
      ],
      { naming: {}, revision: 1, searchEnabled: true },
    );

    expect({ direct: snapshot.direct, deferred: snapshot.deferred }).toEqual({
      direct: ["mcp__pinned__list_files"],
      deferred: ["mcp__searchable__list_files"],
    });
    expect(snapshot.tools.map((t) => t.exposure)).toEqual(["code_mode_only", "direct", "deferred"]);
  });

  it("lists every server by name, a disabled one without its tools and a failed one with its error", () => {
    const snapshot = buildCatalogSnapshot(
      [
        entry("off", [plain], { status: "disabled" }),
        entry("broken", [plain], { status: "failed", statusError: "exited with code 1" }),
        entry("alive", [appOnly]),
      ],
      { naming: {}, revision: 12 },
    );

    expect({ revision: snapshot.revision, servers: snapshot.servers }).toEqual({
      revision: 12,
      servers: [
        { name: "alive", status: "ready", required: false, revision: 3 },
        { name: "broken", status: "failed", error: "exited with code 1", required: false, revision: 3 },
        { name: "off", status: "disabled", required: false, revision: 3 },
      ],
    });
    expect(snapshot.tools.map((t) => t.server)).toEqual(["alive", "broken"]);
  });

  it("gives exactly the snapshot of the plain implementation, member order included", () => {
    const toolArb: fc.Arbitrary<Tool> = fc.record(
      {
        name: fc.constantFrom("a", "a-b", "a_b", "", "é", "😀", "x".repeat(70)),
        title: fc.string({ maxLength: 3 }),
        description: fc.string({ maxLength: 3 }),
        inputSchema: fc.constantFrom(
          { type: "object" },
          { type: "null" },
          { properties: null },
          { type: "object", properties: { b: {}, a: {} } },
        ),
        outputSchema: fc.constant({ type: "object" }),
        annotations: fc.record({ readOnlyHint: fc.boolean(), title: fc.string() }, { requiredKeys: [] }),
        _meta: fc.constantFrom(
          { ui: { visibility: ["app"] } },
          { ui: { visibility: ["model"] } },
          { connector_id: "x" },
          { ui: { resourceUri: "ui://a/b.html" }, connector_name: "y" },
          { big: "m".repeat(17_000) },
        ),
        icons: fc.constantFrom([{ src: "https://a.example/i.png" }], [{ src: "i".repeat(70_000) }]),
      },
      { requiredKeys: ["name", "inputSchema"] },
    );
    const entryArb: fc.Arbitrary<CatalogServerEntry> = fc
      .record({
        server: fc.constantFrom("a", "a-b", "a_b", "b", "mcp__a"),
        status: fc.constantFrom("starting", "ready", "failed", "cancelled", "disabled"),
        statusError: fc.option(fc.constant("boom"), { nil: undefined }),
        revision: fc.integer({ min: 1, max: 50 }),
        tools: fc.array(toolArb, { maxLength: 5 }),
        supportsParallelToolCalls: fc.option(fc.boolean(), { nil: undefined }),
        omitToolsFrom: fc.option(fc.subarray(["direct", "deferred", "code_mode"] as const), {
          nil: undefined,
        }),
      })
      .map(({ server, tools, ...rest }) => entry(server, tools, rest));
    const optionsArb = fc.record({
      naming: fc.record({ nameLimit: fc.integer({ min: 20, max: 80 }), prefixMcp: fc.boolean() }),
      revision: fc.nat(),
      searchEnabled: fc.boolean(),
      exposure: fc.constantFrom("all" as const, "model" as const),
    });

    fc.assert(
      fc.property(fc.array(entryArb, { maxLength: 6 }), optionsArb, (entries, options) => {
        const snapshot = buildCatalogSnapshot(entries, options);
        const expected = referenceSnapshot(entries, options);

        expect(snapshot).toStrictEqual(expected);
        expect(JSON.stringify(snapshot)).toBe(JSON.stringify(expected));
      }),
      { numRuns: 300 },
    );
  });
});

describe("searchCatalog", () => {
  const snapshot = buildCatalogSnapshot(
    [
      entry("files", [plain], { instructions: "Browse the project tree." }),
      entry("tracker", [
        { name: "get-issue", description: "Reads one issue.", inputSchema: { type: "object" } },
      ]),
    ],
    { naming: {}, revision: 9, searchEnabled: true },
  );
  const found = (query: string) =>
    searchCatalog(snapshot, query, { limit: 10 }).tools.map((tool) => tool.flatName);

  it("finds a tool by its server's instructions, the namespace description (§3.5)", () => {
    expect({ tree: found("project TREE"), issue: found("issue"), both: found("tree issue") }).toEqual({
      tree: ["mcp__files__list_files"],
      issue: ["mcp__tracker__get_issue"],
      both: [],
    });
  });
});

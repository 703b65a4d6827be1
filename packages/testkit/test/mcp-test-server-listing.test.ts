// What the test server lists for a script: pages, generated tools, and change detection.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { listedTools, page, scriptChanges, toolsPage } from "../src/mcp-test-server/listing.js";
import { parseScript, type TestServerScript, TestServerScriptSchema } from "../src/mcp-test-server/script.js";

const parsed = (script: TestServerScript) => TestServerScriptSchema.parse(script);

describe("page", () => {
  const items = ["a", "b", "c", "d", "e"];
  it.each([
    { pageSize: undefined, cursor: undefined, expected: { items } },
    { pageSize: 2, cursor: undefined, expected: { items: ["a", "b"], nextCursor: "2" } },
    { pageSize: 2, cursor: "2", expected: { items: ["c", "d"], nextCursor: "4" } },
    { pageSize: 2, cursor: "4", expected: { items: ["e"] } },
    { pageSize: 5, cursor: undefined, expected: { items } },
    { pageSize: 2, cursor: "5", expected: { items: [] } },
    { pageSize: 2, cursor: "6", expected: { invalidCursor: "6" } },
    { pageSize: 2, cursor: "-1", expected: { invalidCursor: "-1" } },
    { pageSize: 2, cursor: "02", expected: { invalidCursor: "02" } },
    { pageSize: 2, cursor: "", expected: { invalidCursor: "" } },
    { pageSize: 2, cursor: "x", expected: { invalidCursor: "x" } },
  ])("pages $pageSize at cursor '$cursor'", ({ pageSize, cursor, expected }) => {
    expect(page(items, pageSize, cursor)).toEqual(expected);
  });

  it("visits every item exactly once when following the cursors", () => {
    fc.assert(
      fc.property(fc.array(fc.integer()), fc.integer({ min: 1, max: 10 }), (all, pageSize) => {
        const seen: number[] = [];
        let cursor: string | undefined;
        do {
          const result = page(all, pageSize, cursor);
          if ("invalidCursor" in result) throw new Error(`issued an invalid cursor ${result.invalidCursor}`);
          seen.push(...result.items);
          cursor = result.nextCursor;
        } while (cursor !== undefined);
        expect(seen).toEqual(all);
      }),
    );
  });
});

describe("tools listing", () => {
  it("appends generated echo tools after the scripted ones", () => {
    expect(listedTools(parsed({ tools: [{ name: "x" }], toolCount: 2 }))).toEqual([
      { name: "x", inputSchema: { type: "object" } },
      { name: "t0000", description: "Generated echo tool 0.", inputSchema: { type: "object" } },
      { name: "t0001", description: "Generated echo tool 1.", inputSchema: { type: "object" } },
    ]);
  });

  it("returns the first page with the same cursor forever under cursorLoop", () => {
    const script = parsed({ toolCount: 3, toolsPageSize: 2, cursorLoop: true });
    const first = toolsPage(script, undefined);
    expect(toolsPage(script, "loop")).toEqual(first);
    expect(first).toEqual({
      items: listedTools(script).slice(0, 2),
      nextCursor: "loop",
    });
  });

  it.each([
    {
      name: "a tool added",
      after: { tools: [{ name: "a" }, { name: "b" }] },
      expected: { tools: true, resources: false, prompts: false },
    },
    {
      name: "a description changed",
      after: { tools: [{ name: "a", description: "new" }] },
      expected: { tools: true, resources: false, prompts: false },
    },
    {
      name: "only a behaviour changed",
      after: { tools: [{ name: "a", behavior: { kind: "hang" as const } }] },
      expected: { tools: false, resources: false, prompts: false },
    },
    {
      name: "only the page size changed",
      after: { tools: [{ name: "a" }], toolsPageSize: 1 },
      expected: { tools: false, resources: false, prompts: false },
    },
    {
      name: "a resource added",
      after: { tools: [{ name: "a" }], resources: [{ uri: "u://x", name: "x" }] },
      expected: { tools: false, resources: true, prompts: false },
    },
    {
      name: "a template added",
      after: { tools: [{ name: "a" }], resourceTemplates: [{ uriTemplate: "u://{x}", name: "x" }] },
      expected: { tools: false, resources: true, prompts: false },
    },
    {
      name: "a prompt added",
      after: { tools: [{ name: "a" }], prompts: [{ name: "p", text: "hi" }] },
      expected: { tools: false, resources: false, prompts: true },
    },
  ])("reports what a client would see change when $name", ({ after, expected }) => {
    expect(scriptChanges(parsed({ tools: [{ name: "a" }] }), parsed(after))).toEqual(expected);
  });
});

describe("parseScript", () => {
  it.each([
    { text: "{", message: /^test server script is not JSON: / },
    {
      text: '{"tools":[{"name":"a","behavior":{"kind":"explode"}}]}',
      message: /^test server script is invalid: .*tools\[0\]\.behavior\.kind/s,
    },
    { text: '{"tool":[]}', message: /^test server script is invalid: .*Unrecognized key: "tool"/s },
  ])("rejects $text with a message naming the problem", ({ text, message }) => {
    expect(() => parseScript(text)).toThrow(message);
  });

  it("defaults tools to none and a tool's behaviour to echo", () => {
    expect(parseScript('{"toolCount":1}')).toEqual({ toolCount: 1, tools: [] });
    expect(parseScript('{"tools":[{"name":"a"}]}')).toEqual({
      tools: [{ name: "a", behavior: { kind: "echo" } }],
    });
  });
});

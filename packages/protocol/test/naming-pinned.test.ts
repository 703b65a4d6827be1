import { describe, expect, it } from "vitest";
import {
  canonicalJson,
  nameHash,
  normalizeCatalog,
  type RawTool,
  toolFingerprint,
} from "../src/naming/index.js";
import { sha256 } from "./naming-reference.js";

// Values computed by the first, plain implementation. Clients hold fingerprints and names across
// upgrades, so a faster implementation must reproduce these bytes, not just its own.
const shown = ({ name, title, description, inputSchema, outputSchema, annotations }: RawTool) => ({
  name,
  title,
  description,
  inputSchema,
  outputSchema,
  annotations,
});

describe("pinned tool fingerprints", () => {
  it.each([
    {
      label: "a plain tool",
      tool: {
        name: "search",
        description: "Searches the web.",
        inputSchema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
      },
      canonical:
        '{"description":"Searches the web.","inputSchema":{"properties":{"query":{"type":"string"}},"required":["query"],"type":"object"},"name":"search"}',
      fingerprint: "92543b72dd24bdd34d5ec22b9658038c8355f81502693594239efa91d57468c5",
    },
    {
      label: "escapes, non-ASCII, numeric keys and odd numbers",
      tool: {
        name: "get-issue",
        title: "Get issue",
        description: 'Line one\nline "two"\t\\ é ✓ 😀',
        inputSchema: {
          type: "object",
          properties: {
            "10": { type: "integer", minimum: -0, maximum: 1e21 },
            "2": { type: "number", multipleOf: 0.1 },
            a: { enum: [null, true, false, "x"] },
          },
        },
        outputSchema: { type: "object" },
        annotations: { readOnlyHint: true, title: "Issue" },
        _meta: { ignored: 1 },
      },
      canonical:
        '{"annotations":{"readOnlyHint":true,"title":"Issue"},"description":"Line one\\nline \\"two\\"\\t\\\\ é ✓ 😀",' +
        '"inputSchema":{"properties":{"10":{"maximum":1e+21,"minimum":0,"type":"integer"},"2":{"multipleOf":0.1,"type":"number"},' +
        '"a":{"enum":[null,true,false,"x"]}},"type":"object"},"name":"get-issue","outputSchema":{"type":"object"},"title":"Get issue"}',
      fingerprint: "e08fbf2b61c0261ed141f11969eafaed23c391b545b9e94801128ff45c0e87fd",
    },
    {
      label: "a lone surrogate, a control char and a parsed __proto__ key",
      tool: JSON.parse(
        '{"name":"odd","description":"lone \\ud800 surrogate and \\u0001 control","inputSchema":{"type":"object","__proto__":{"type":"string"},"properties":{}}}',
      ) as RawTool,
      canonical:
        '{"description":"lone \\ud800 surrogate and \\u0001 control","inputSchema":{"__proto__":{"type":"string"},"properties":{},"type":"object"},"name":"odd"}',
      fingerprint: "7268a7dff98c6541190444cad7dd90ce6f9c9c08f93172ac9ee5f52088fe274d",
    },
  ])("fingerprints $label as before", ({ tool, canonical, fingerprint }) => {
    expect(canonicalJson(shown(tool))).toBe(canonical);
    expect(sha256(canonical)).toBe(fingerprint);
    expect(toolFingerprint(tool)).toBe(fingerprint);
  });
});

describe("pinned name hashes", () => {
  it.each([
    ["srv\0srv\0\0tool-name\0tool-name", "_b39ec872405a"],
    ["é\0é\0", "_84b91cefb0ff"],
    ["😀", "_9c533688a979"],
  ])("hashes %j as %s", (input, expected) => {
    expect(nameHash(input)).toBe(expected);
  });

  it("names colliding namespaces, colliding tools and a long name as before", () => {
    const { tools } = normalizeCatalog([
      { server: "server.one", tool: { name: "tool-name" } },
      { server: "server.one", tool: { name: "tool_name" } },
      { server: "server-one", tool: { name: "x".repeat(70) } },
      { server: "apps", connectorId: "calendar", tool: { name: "search" } },
    ]);

    expect(tools.map((t) => [t.flatName, t.hookName, t.fingerprint])).toEqual([
      [
        "mcp__apps__search",
        "mcp__apps__search",
        "6fe519851b2065a13dca543ef9024bd8f4766f7c9ab587fbe6668e587fb177a4",
      ],
      [
        "mcp__server_one_e5c0c3b66d6d__xxxxxxxxxxxxxxxxxxxxx_6aece0509b47",
        "mcp__server_one_e5c0c3b66d6d__xxxxxxxxxxxxxxxxxxxxx_6aece0509b47",
        "d4de6ecb86c1b3572a333b1c2a6ba1b27a022a503822dbe39b56b9a08b634759",
      ],
      [
        "mcp__server_one_ef207367173c__tool_name_f4749eab6b18",
        "mcp__server_one_ef207367173c__tool_name_f4749eab6b18",
        "a0f8a43f3fe6ef5c3473953d07148836c7287bca293aebc8e0ba442c6c2ee26c",
      ],
      [
        "mcp__server_one_ef207367173c__tool_name_408a7dbc9d83",
        "mcp__server_one_ef207367173c__tool_name_408a7dbc9d83",
        "2eaa850b6361ce6dfd2d7ecf7310317d0d54df9578e487abc640fb4c3bc45d7d",
      ],
    ]);
  });
});

import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  canonicalJson,
  exposureFor,
  hookName,
  isModelVisible,
  MAX_NAMESPACE_DESCRIPTION_BYTES,
  modelInputSchema,
  namespaceDescription,
  type RawTool,
  sanitizeName,
  searchText,
  supportsParallelCalls,
  toolFingerprint,
  withoutUntrustedMeta,
} from "../src/naming/index.js";

const utf8Bytes = (text: string) => new TextEncoder().encode(text).length;

describe("sanitizeName", () => {
  it.each([
    ["srv", "srv"],
    ["server.one", "server_one"],
    ["tool.two-three", "tool_two_three"],
    ["Mixed_Case9", "Mixed_Case9"],
    ["a b", "a_b"],
    ["", "_"],
    ["-", "_"],
    ["日本", "__"],
    ["😀x", "_x"],
    ["npm:@scope/package.name", "npm__scope_package_name"],
  ])("turns %j into %j", (raw, sanitized) => {
    expect(sanitizeName(raw)).toBe(sanitized);
  });
});

describe("hookName", () => {
  it.each([
    ["memory", "create_entities", "mcp__memory__create_entities"],
    ["mcp__foo", "exec_command", "mcp__foo__exec_command"],
    ["mcp__memory__", "create_entities", "mcp__memory__create_entities"],
    ["mcp__calendar__", "_create_event", "mcp__calendar__create_event"],
    ["srv", "__x", "mcp__srv__x"],
  ])("[22] names (%j, %j) %j", (namespace, name, expected) => {
    expect(hookName(namespace, name)).toBe(expected);
  });
});

describe("isModelVisible", () => {
  it.each([
    [undefined, true],
    [{}, true],
    [{ ui: {} }, true],
    [{ ui: { visibility: ["app"] } }, false],
    [{ ui: { visibility: [] } }, false],
    [{ ui: { visibility: ["app", "model"] } }, true],
    [{ ui: { visibility: "app" } }, true],
    [{ ui: "app" }, true],
  ])("[19] with _meta %j is visible: %s", (meta, visible) => {
    expect(isModelVisible({ name: "t", _meta: meta })).toBe(visible);
  });
});

describe("supportsParallelCalls", () => {
  it.each([
    [undefined, false, false],
    [{ readOnlyHint: true }, false, true],
    [{ readOnlyHint: false }, false, false],
    [{ readOnlyHint: false }, true, true],
    [undefined, true, true],
    [{ destructiveHint: false }, false, false],
  ])("[23] annotations %j with server opt-in %s → %s", (annotations, optIn, parallel) => {
    expect(supportsParallelCalls({ name: "t", annotations }, optIn)).toBe(parallel);
  });
});

describe("withoutUntrustedMeta", () => {
  it("drops the connector keys a server could forge and keeps the rest", () => {
    const tool: RawTool = {
      name: "t",
      _meta: {
        connector_id: "c",
        connector_name: "n",
        connector_display_name: "d",
        connector_description: "x",
        connectorDescription: "y",
        ui: { visibility: ["model"] },
      },
    };

    expect(withoutUntrustedMeta(tool)).toEqual({ name: "t", _meta: { ui: { visibility: ["model"] } } });
    expect(tool._meta).toHaveProperty("connector_id", "c");
  });

  it("returns a tool without such keys unchanged", () => {
    const tool: RawTool = { name: "t", _meta: { ui: {} } };

    expect(withoutUntrustedMeta(tool)).toBe(tool);
  });
});

describe("exposureFor", () => {
  it.each([
    // checklist 24: search available → deferred, otherwise direct.
    [true, undefined, false, "deferred"],
    [false, undefined, false, "direct"],
    // §3.6: with deferred omitted, search cannot defer the tool, so it is listed directly.
    [true, ["deferred"], false, "direct"],
    [true, ["direct"], false, "deferred"],
    [false, ["direct"], false, "code_mode_only"],
    [true, ["code_mode"], false, "deferred_model_only"],
    [false, ["code_mode"], false, "direct_model_only"],
    [true, ["deferred", "code_mode"], false, "direct_model_only"],
    [true, ["deferred", "direct"], false, "code_mode_only"],
    [true, ["direct", "deferred", "code_mode"], false, "hidden"],
    [false, ["direct", "code_mode"], false, "hidden"],
    [true, undefined, true, "direct_model_only"],
    [true, ["direct"], true, "hidden"],
  ] as const)(
    "[24 differs] search %s, omitted %j, direct-only %s → %s (§3.6)",
    (searchEnabled, omitToolsFrom, directOnly, expected) => {
      expect(exposureFor({ searchEnabled, omitToolsFrom, directOnly })).toBe(expected);
    },
  );
});

describe("namespaceDescription", () => {
  it.each([
    ["  Plan events.\n", "Plan events."],
    [" \t ", ""],
    [undefined, ""],
    ["\u00a0Use me.\u3000", "Use me."],
  ])("[20] instructions %j → %j", (instructions, expected) => {
    expect(namespaceDescription(instructions)).toBe(expected);
  });

  it("[20] caps the description at 512 KiB without splitting a char", () => {
    const ascii = "a".repeat(MAX_NAMESPACE_DESCRIPTION_BYTES - 1);
    const described = namespaceDescription(`${ascii}é tail`);

    // `é` is two bytes and only one is left, so it is cut whole.
    expect(described).toBe(ascii);
    expect(utf8Bytes(namespaceDescription(`${"é".repeat(300_000)}`))).toBe(MAX_NAMESPACE_DESCRIPTION_BYTES);
    expect(namespaceDescription("😀".repeat(200_000))).toBe("😀".repeat(MAX_NAMESPACE_DESCRIPTION_BYTES / 4));
  });
});

describe("modelInputSchema", () => {
  it.each([
    [{ type: "object" }, { type: "object", properties: {} }],
    [
      { type: "object", properties: null },
      { type: "object", properties: {} },
    ],
    [
      { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
      { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
    ],
  ])("[21] gives %j to the model as %j", (schema, expected) => {
    expect(modelInputSchema(schema)).toEqual({ ok: true, schema: expected });
  });

  it("[21] skips a tool whose schema has root type null", () => {
    expect(modelInputSchema({ type: "null" })).toEqual({
      ok: false,
      reason: "tool input schema must not be a singleton null type",
    });
  });
});

describe("searchText", () => {
  // The reference's example without its [apps] connector name and plugin names.
  it("reproduces the reference's calendar example, less what only apps have (§3.5)", () => {
    expect(
      searchText({
        flatName: "mcp__calendar___create_event",
        callableName: "_create_event",
        rawName: "createEvent",
        server: "codex-apps",
        title: "Create event",
        description: "Create a calendar event.",
        namespaceDescription: " Plan events. ",
        inputSchema: {
          type: "object",
          properties: { start_time: { type: "string" }, attendees: { type: "string" } },
          additionalProperties: false,
        },
      }),
    ).toBe(
      "mcp__calendar___create_event _create_event createEvent codex-apps Create event Create a calendar event. Plan events. attendees start_time",
    );
  });

  it("leaves out blank and absent text", () => {
    expect(
      searchText({
        flatName: "mcp__srv__foo",
        callableName: "foo",
        rawName: "foo",
        server: "srv",
        title: "  ",
        inputSchema: { type: "object" },
      }),
    ).toBe("mcp__srv__foo foo foo srv");
  });
});

describe("toolFingerprint", () => {
  const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

  it("hashes the canonical JSON of what the model is shown, absent fields omitted", () => {
    const tool: RawTool = {
      name: "t",
      description: "d",
      inputSchema: { type: "object", properties: { b: { type: "string" }, a: { type: "number" } } },
      annotations: { readOnlyHint: true },
      _meta: { ignored: true },
      icons: [],
    };

    expect(toolFingerprint(tool)).toBe(
      sha256(
        '{"annotations":{"readOnlyHint":true},"description":"d","inputSchema":{"properties":{"a":{"type":"number"},"b":{"type":"string"}},"type":"object"},"name":"t"}',
      ),
    );
  });

  it("does not change with key order or _meta, and changes with the description", () => {
    const tool: RawTool = { name: "t", inputSchema: { type: "object", required: ["x"] }, title: "T" };
    const reordered: RawTool = {
      title: "T",
      inputSchema: { required: ["x"], type: "object" },
      name: "t",
      _meta: { a: 1 },
    };

    expect(toolFingerprint(reordered)).toBe(toolFingerprint(tool));
    expect(toolFingerprint({ ...tool, description: "new" })).not.toBe(toolFingerprint(tool));
  });
});

describe("canonicalJson", () => {
  it.each([
    [{ b: 1, a: [3, { d: null, c: "x" }] }, '{"a":[3,{"c":"x","d":null}],"b":1}'],
    [{ a: undefined, b: [undefined] }, '{"b":[null]}'],
    ["é\n", '"é\\n"'],
    [[], "[]"],
    [{}, "{}"],
    [1.5, "1.5"],
    [Number.NaN, "null"],
  ])("writes %j as %s", (value, expected) => {
    expect(canonicalJson(value)).toBe(expected);
  });
});

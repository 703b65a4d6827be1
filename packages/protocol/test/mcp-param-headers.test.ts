// The SEP-2243 custom-header rules (MCP 2026-07-28): which x-mcp-header annotations are valid,
// how an argument becomes an Mcp-Param-* header and back, and when a header disagrees with the
// body. Cases are the conformance suite's (http-invalid-tool-headers, http-custom-headers,
// http-custom-header-server-validation) where it has them.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  decodeMcpParamValue,
  encodeMcpParamValue,
  type McpParamDeclaration,
  mcpParamHeaders,
  mcpParamMismatch,
  mcpParamText,
  scanMcpParams,
} from "../src/mcp-param-headers.js";

const schema = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: "object",
  properties,
  ...extra,
});

describe("scanMcpParams", () => {
  it("finds the annotated properties, at any depth through properties, with their types", () => {
    const scan = scanMcpParams(
      schema({
        region: { type: "string", "x-mcp-header": "Region" },
        priority: { type: "integer", "x-mcp-header": "Priority" },
        verbose: { type: "boolean", "x-mcp-header": "Verbose" },
        query: { type: "string" },
        target: { type: "object", properties: { zone: { type: "string", "x-mcp-header": "Zone" } } },
        // A parameter named like the keyword is a parameter, not an annotation.
        "x-mcp-header": { type: "string" },
      }),
    );
    expect(scan).toEqual({
      valid: true,
      declarations: [
        { path: ["region"], name: "Region", type: "string" },
        { path: ["priority"], name: "Priority", type: "integer" },
        { path: ["verbose"], name: "Verbose", type: "boolean" },
        { path: ["target", "zone"], name: "Zone", type: "string" },
      ],
    });
  });

  it("finds none in a schema without annotations, or without properties", () => {
    expect(scanMcpParams(schema({ q: { type: "string" } }))).toEqual({ valid: true, declarations: [] });
    expect(scanMcpParams({ type: "object" })).toEqual({ valid: true, declarations: [] });
    expect(scanMcpParams(undefined)).toEqual({ valid: true, declarations: [] });
  });

  // http-invalid-tool-headers' tools, each of which a client must exclude.
  const invalid: Record<string, Record<string, unknown>> = {
    invalid_empty_header: schema({ value: { type: "string", "x-mcp-header": "" } }),
    invalid_object_header: schema({ data: { type: "object", "x-mcp-header": "Data" } }),
    invalid_array_header: schema({
      items: { type: "array", items: { type: "string" }, "x-mcp-header": "Items" },
    }),
    invalid_null_header: schema({ nil: { type: "null", "x-mcp-header": "Nil" } }),
    invalid_number_header: schema({ score: { type: "number", "x-mcp-header": "Score" } }),
    invalid_duplicate_same_case: schema({
      field1: { type: "string", "x-mcp-header": "Region" },
      field2: { type: "string", "x-mcp-header": "Region" },
    }),
    invalid_duplicate_diff_case: schema({
      field1: { type: "string", "x-mcp-header": "MyField" },
      field2: { type: "string", "x-mcp-header": "myfield" },
    }),
    invalid_space_in_name: schema({ value: { type: "string", "x-mcp-header": "My Region" } }),
    invalid_colon_in_name: schema({ value: { type: "string", "x-mcp-header": "Region:Primary" } }),
    invalid_non_ascii_name: schema({ value: { type: "string", "x-mcp-header": "Région" } }),
    invalid_control_char_name: schema({ value: { type: "string", "x-mcp-header": "Region\t1" } }),
    untyped: schema({ value: { "x-mcp-header": "Value" } }),
    type_list: schema({ value: { type: ["string", "null"], "x-mcp-header": "Value" } }),
    not_a_string: schema({ value: { type: "string", "x-mcp-header": 7 } }),
    on_the_root: { type: "string", "x-mcp-header": "Root" },
    under_items: schema({
      list: { type: "array", items: { type: "string", "x-mcp-header": "Item" } },
    }),
    under_anyOf: schema({}, { anyOf: [schema({ a: { type: "string", "x-mcp-header": "A" } })] }),
    in_defs: schema(
      { id: { $ref: "#/$defs/id" } },
      { $defs: { id: { type: "string", "x-mcp-header": "Id" } } },
    ),
    under_additionalProperties: schema(
      {},
      { additionalProperties: { type: "string", "x-mcp-header": "Extra" } },
    ),
  };

  it.each(Object.entries(invalid))("makes %s invalid, saying why", (_name, inputSchema) => {
    const scan = scanMcpParams(inputSchema);
    expect(scan.valid).toBe(false);
    expect(scan.valid ? "" : scan.reason).toMatch(/x-mcp-header/);
  });

  it("keeps the valid tool of that scenario valid", () => {
    expect(scanMcpParams(schema({ region: { type: "string", "x-mcp-header": "Region" } })).valid).toBe(true);
  });
});

describe("encodeMcpParamValue and decodeMcpParamValue", () => {
  // http-custom-headers' arguments: plain ASCII as is, everything else wrapped.
  it.each([
    ["us-west1", "us-west1"],
    ["us west 1", "us west 1"],
    ["test-method", "test-method"],
    ["Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="],
    [" padded ", "=?base64?IHBhZGRlZCA=?="],
    [" us-west1", "=?base64?IHVzLXdlc3Qx?="],
    ["us-west1 ", "=?base64?dXMtd2VzdDEg?="],
    ["line1\nline2", "=?base64?bGluZTEKbGluZTI=?="],
    ["line1\r\nline2", "=?base64?bGluZTENCmxpbmUy?="],
    ["\tindented", "=?base64?CWluZGVudGVk?="],
    ["a\tb", "=?base64?YQli?="],
    ["", "=?base64??="],
    // Text that looks like the wrapper is wrapped, or it would be read as one.
    ["=?base64?SGVsbG8=?=", "=?base64?PT9iYXNlNjQ/U0dWc2JHOD0/PQ==?="],
  ])("sends %j as %j, and reads it back", (text, header) => {
    expect(encodeMcpParamValue(text)).toBe(header);
    expect(decodeMcpParamValue(header)).toBe(text);
  });

  it("reads back every string it sends, always as a safe plain-ASCII field value", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), (text) => {
        const header = encodeMcpParamValue(text);
        expect(header).toMatch(/^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/);
        expect(decodeMcpParamValue(header)).toBe(text);
      }),
    );
  });

  // http-custom-header-server-validation's cases.
  it("refuses a wrapped payload that is not canonical Base64 of UTF-8", () => {
    expect(decodeMcpParamValue("=?base64?SGVsbG8=?=")).toBe("Hello");
    expect(decodeMcpParamValue("=?base64?SGVsbG8?=")).toBeUndefined(); // padding missing
    expect(decodeMcpParamValue("=?base64?SGVs!!!bG8=?=")).toBeUndefined(); // not the alphabet
    expect(decodeMcpParamValue("=?base64?/w==?=")).toBeUndefined(); // not UTF-8
  });

  it("takes a value without the whole wrapper literally", () => {
    expect(decodeMcpParamValue("SGVsbG8=")).toBe("SGVsbG8=");
    expect(decodeMcpParamValue("=?base64?SGVsbG8=")).toBe("=?base64?SGVsbG8=");
    expect(decodeMcpParamValue("SGVsbG8=?=")).toBe("SGVsbG8=?=");
  });
});

describe("mcpParamText", () => {
  it("gives strings, integers and booleans their text, and nothing else one", () => {
    expect([
      mcpParamText("x"),
      mcpParamText(42),
      mcpParamText(-7),
      mcpParamText(false),
      mcpParamText(true),
      mcpParamText(null),
      mcpParamText(undefined),
      mcpParamText({}),
      mcpParamText([1]),
      mcpParamText(Number.NaN),
      mcpParamText(2 ** 53),
    ]).toEqual([
      "x",
      "42",
      "-7",
      "false",
      "true",
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });
});

const declared: McpParamDeclaration[] = [
  { path: ["region"], name: "Region", type: "string" },
  { path: ["priority"], name: "Priority", type: "integer" },
  { path: ["verbose"], name: "Verbose", type: "boolean" },
  { path: ["target", "zone"], name: "Zone", type: "string" },
];

describe("mcpParamHeaders", () => {
  it("mirrors each annotated argument present, and omits null and absent ones", () => {
    expect(
      mcpParamHeaders(declared, { region: "Hello, 世界", priority: 42, verbose: null, query: "SELECT 1" }),
    ).toEqual({ "Mcp-Param-Region": "=?base64?SGVsbG8sIOS4lueVjA==?=", "Mcp-Param-Priority": "42" });
    expect(mcpParamHeaders(declared, { target: { zone: "eu" }, verbose: false })).toEqual({
      "Mcp-Param-Verbose": "false",
      "Mcp-Param-Zone": "eu",
    });
    expect(mcpParamHeaders(declared, undefined)).toEqual({});
  });
});

describe("mcpParamMismatch", () => {
  const check = (args: unknown, headers: Record<string, string>) =>
    mcpParamMismatch(declared, args, (name) => headers[name]);

  it("accepts headers that match the body, plain or wrapped", () => {
    expect(
      check(
        { region: "Hello", priority: 42 },
        { "mcp-param-region": "=?base64?SGVsbG8=?=", "mcp-param-priority": "42" },
      ),
    ).toBeUndefined();
    expect(check({ region: "SGVsbG8=" }, { "mcp-param-region": "SGVsbG8=" })).toBeUndefined();
  });

  it("compares integers as numbers", () => {
    expect(check({ priority: 42 }, { "mcp-param-priority": "42.0" })).toBeUndefined();
    expect(check({ priority: 42 }, { "mcp-param-priority": "43" })?.kind).toBe("mismatch");
  });

  it("expects no header for a null or absent value, and ignores one sent anyway", () => {
    expect(check({ verbose: null }, {})).toBeUndefined();
    expect(check({}, { "mcp-param-region": "anything" })).toBeUndefined();
  });

  it("refuses a missing header, an invalid Base64 one, and one that disagrees, naming the header", () => {
    expect(check({ region: "test-value" }, {})).toEqual({
      kind: "missing",
      header: "Mcp-Param-Region",
      message: "arguments.region is in the body but the Mcp-Param-Region header is missing",
    });
    expect(check({ region: "Hello" }, { "mcp-param-region": "=?base64?SGVsbG8?=" })).toMatchObject({
      kind: "invalid-encoding",
      header: "Mcp-Param-Region",
    });
    expect(check({ target: { zone: "eu" } }, { "mcp-param-zone": "us" })).toEqual({
      kind: "mismatch",
      header: "Mcp-Param-Zone",
      message: 'the Mcp-Param-Zone header says "us" but arguments.target.zone is "eu"',
    });
    expect(check({ verbose: true }, { "mcp-param-verbose": "TRUE" })?.kind).toBe("mismatch");
  });
});

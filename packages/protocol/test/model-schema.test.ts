import { describe, expect, it } from "vitest";
import {
  cleanModelSchema,
  MAX_COMPACT_SCHEMA_BYTES,
  NULL_ROOT_SCHEMA_ERROR,
} from "../src/naming/model-schema.js";
import { modelInputSchema } from "../src/naming/model-spec.js";

const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).length;
const clean = (schema: Record<string, unknown>) => {
  const result = cleanModelSchema(schema);
  if (!result.ok) throw new Error(result.reason);
  return result.schema;
};

describe("the model's schema clean-up (§3.4)", () => {
  it.each([
    {
      name: "boolean property schemas become accept-all strings",
      input: { type: "object", properties: { a: true, b: false } },
      output: { type: "object", properties: { a: { type: "string" }, b: { type: "string" } } },
    },
    {
      name: "const becomes a one-value enum (and a string)",
      input: { const: "tagged" },
      output: { enum: ["tagged"], type: "string" },
    },
    {
      name: "properties, required or additionalProperties make an object, with properties defaulted",
      input: { additionalProperties: false },
      output: { additionalProperties: false, type: "object", properties: {} },
    },
    {
      name: "items or prefixItems make an array, with items defaulted",
      input: { prefixItems: [{ type: "string" }] },
      output: { prefixItems: [{ type: "string" }], type: "array", items: { type: "string" } },
    },
    {
      name: "enum, format and maxLength make a string",
      input: { format: "date-time" },
      output: { format: "date-time", type: "string" },
    },
    {
      name: "numeric bounds make a number",
      input: { multipleOf: 5 },
      output: { multipleOf: 5, type: "number" },
    },
    {
      name: "a node with no hint becomes {}",
      input: { type: "object", properties: { id: { description: "Ticket", title: "Ticket ID" } } },
      output: { type: "object", properties: { id: {} } },
    },
    {
      name: "legacy type names are inferred again (type enum, type const)",
      input: {
        type: "object",
        properties: { kind: { type: "const", const: "x" }, size: { type: "enum", enum: ["s", "m"] } },
      },
      output: {
        type: "object",
        properties: { kind: { type: "string", enum: ["x"] }, size: { type: "string", enum: ["s", "m"] } },
      },
    },
    {
      name: "a type union keeps its known names and defaults what each needs",
      input: { type: ["object", "null", "mystery"] },
      output: { type: ["object", "null"], properties: {} },
    },
    {
      name: "a $ref or a composition without a type stays untyped",
      input: {
        type: "object",
        properties: { a: { $ref: "#/$defs/A" }, b: { anyOf: [{ type: "string" }, true] } },
        $defs: { A: { type: "integer" } },
      },
      output: {
        type: "object",
        properties: { a: { $ref: "#/$defs/A" }, b: { anyOf: [{ type: "string" }, { type: "string" }] } },
        $defs: { A: { type: "integer" } },
      },
    },
    {
      name: "unreachable definitions are pruned, reachable ones (transitively, legacy table too) kept",
      input: {
        type: "object",
        properties: { user: { $ref: "#/definitions/User" }, tag: { $ref: "#/$defs/Tag/properties/name" } },
        definitions: {
          User: { type: "object", properties: { profile: { $ref: "#/definitions/Profile" } } },
          Profile: { type: "string" },
          Unused: { type: "string" },
        },
        $defs: { Tag: { type: "object", properties: { name: { type: "string" } } }, Gone: { type: "null" } },
      },
      output: {
        type: "object",
        properties: { user: { $ref: "#/definitions/User" }, tag: { $ref: "#/$defs/Tag/properties/name" } },
        definitions: {
          User: { type: "object", properties: { profile: { $ref: "#/definitions/Profile" } } },
          Profile: { type: "string" },
        },
        $defs: { Tag: { type: "object", properties: { name: { type: "string" } } } },
      },
    },
    {
      name: "a cycle of references ends, and a definition table that is not an object is dropped",
      input: {
        type: "object",
        properties: { node: { $ref: "#/$defs/Node" } },
        $defs: { Node: { type: "object", properties: { next: { $ref: "#/$defs/Node" } } } },
        definitions: ["not", "a", "table"],
      },
      output: {
        type: "object",
        properties: { node: { $ref: "#/$defs/Node" } },
        $defs: { Node: { type: "object", properties: { next: { $ref: "#/$defs/Node" } } } },
      },
    },
  ])("$name", ({ input, output }) => {
    expect(clean(input)).toEqual(output);
  });

  it("keeps keywords the reference's typed schema does not model (format, default, pattern)", () => {
    const input = {
      type: "object",
      properties: { when: { type: "string", format: "date", default: "2026-01-01", pattern: "^\\d" } },
      required: ["when"],
    };
    expect(clean(input)).toEqual(input);
  });

  it("refuses a root of type null, also as a one-name union", () => {
    expect(cleanModelSchema({ type: "null" })).toEqual({ ok: false, reason: NULL_ROOT_SCHEMA_ERROR });
    expect(cleanModelSchema({ type: ["null"] })).toEqual({ ok: false, reason: NULL_ROOT_SCHEMA_ERROR });
  });

  it("never changes the schema it was given", () => {
    const input = { properties: { a: true }, const: 1 };
    const copy = structuredClone(input);
    clean(input);
    expect(input).toEqual(copy);
  });
});

describe("the size compaction (§3.4)", () => {
  const description = "d".repeat(200);
  const wide = (count: number, schema: (i: number) => unknown) =>
    Object.fromEntries(Array.from({ length: count }, (_, i) => [`p${i}`, schema(i)]));

  it("leaves a schema within 5,000 bytes as it is", () => {
    const input = { type: "object", properties: wide(10, () => ({ type: "string", description })) };
    expect(bytes(input)).toBeLessThanOrEqual(MAX_COMPACT_SCHEMA_BYTES);
    expect(clean(input)).toEqual(input);
  });

  it("first strips descriptions, everywhere, and stops once the schema fits", () => {
    const input = {
      type: "object",
      description,
      properties: wide(30, () => ({ type: "string", description })),
      $defs: { Kept: { type: "string", description } },
    };
    input.properties.p0 = { $ref: "#/$defs/Kept", description };
    expect(clean(input)).toEqual({
      type: "object",
      properties: { ...wide(30, () => ({ type: "string" })), p0: { $ref: "#/$defs/Kept" } },
      $defs: { Kept: { type: "string" } },
    });
  });

  it("then drops the definitions, references to them becoming {}", () => {
    const big = {
      type: "object",
      properties: wide(120, () => ({ type: "integer", minimum: 1, maximum: 99 })),
    };
    const input = {
      type: "object",
      properties: { a: { $ref: "#/$defs/Big" }, b: { type: "string" } },
      $defs: { Big: big },
    };
    expect(bytes({ ...input, $defs: {} })).toBeLessThan(MAX_COMPACT_SCHEMA_BYTES);
    expect(clean(input)).toEqual({ type: "object", properties: { a: {}, b: { type: "string" } } });
  });

  it("then collapses complex schemas nested deeper than 3 into {}", () => {
    const deep = { type: "object", properties: { leaf: { type: "string" } } };
    const input = {
      type: "object",
      properties: wide(38, () => ({
        type: "object",
        properties: {
          inner: { type: "object", properties: { deep, flat: { type: "integer", minimum: 0 } } },
        },
      })),
    };
    const collapsed = {
      type: "object",
      properties: wide(38, () => ({
        type: "object",
        properties: {
          inner: { type: "object", properties: { deep: {}, flat: { type: "integer", minimum: 0 } } },
        },
      })),
    };
    expect(bytes(collapsed)).toBeLessThanOrEqual(MAX_COMPACT_SCHEMA_BYTES);
    expect(clean(input)).toEqual(collapsed);
  });

  it("last prunes compositions, and stops there even when still over budget", () => {
    const input = {
      type: "object",
      properties: {
        ...wide(120, () => ({ type: "integer", minimum: 0, maximum: 10 })),
        either: { anyOf: [{ type: "string" }, { type: "integer" }] },
      },
    };
    const result = clean(input);
    expect(result.properties).toEqual({
      ...wide(120, () => ({ type: "integer", minimum: 0, maximum: 10 })),
      either: {},
    });
    expect(bytes(result)).toBeGreaterThan(MAX_COMPACT_SCHEMA_BYTES);
  });
});

describe("modelInputSchema", () => {
  it.each([null, [], "object", 3])("cannot show a tool whose input schema is %j", (schema) => {
    const result = modelInputSchema(schema);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toMatch(/^the input schema is .+, not a JSON object$/);
  });

  it("cleans a schema once and hands the same answer back for the same object", () => {
    const schema = { type: "object", properties: { a: { const: 1 } } };
    const first = modelInputSchema(schema);
    expect(first).toEqual({
      ok: true,
      schema: { type: "object", properties: { a: { enum: [1], type: "string" } } },
    });
    expect(modelInputSchema(schema)).toBe(first);
  });
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type CatalogInput,
  canonicalJson,
  type NamingOptions,
  normalizeCatalog,
  type RawTool,
  sanitizeName,
  toolFingerprint,
} from "../src/naming/index.js";
import {
  referenceCanonicalJson,
  referenceFingerprint,
  referenceNormalizeCatalog,
  referenceSanitizeName,
} from "./naming-reference.js";

// Any UTF-16 code unit, so lone surrogates and broken pairs come up as well as whole ones.
const codeUnitArb = fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit));
const textArb = fc.oneof(
  fc.string({ unit: "binary", maxLength: 12 }),
  fc.string({ unit: codeUnitArb, maxLength: 12 }),
  fc.string({
    unit: fc.constantFrom("a", "\0", '"', "\\", "\n", "\u0001", "\u2028", "é", "\ud800"),
    maxLength: 8,
  }),
  fc.string({ unit: "grapheme-ascii", minLength: 60, maxLength: 200 }),
);

// Keys that sort differently by code unit and by number, or that are special to objects.
const keyArb = fc.oneof(
  {
    arbitrary: fc.constantFrom("__proto__", "toJSON", "10", "2", "-1", "01", "type", "properties", ""),
    weight: 1,
  },
  { arbitrary: fc.string({ unit: codeUnitArb, maxLength: 4 }), weight: 2 },
);

const valueArb = fc.anything({
  key: keyArb,
  maxDepth: 4,
  values: [
    fc.boolean(),
    fc.integer(),
    fc.double(),
    fc.constantFrom(-0, 1e21, 0.1, Number.NaN, Number.POSITIVE_INFINITY),
    textArb,
    fc.constant(null),
    fc.constant(undefined),
    fc.constant(() => 1),
    fc.constant(Symbol.for("s")),
  ],
  withBoxedValues: true,
  withDate: true,
  withMap: true,
  withNullPrototype: true,
  withObjectString: true,
  withSet: true,
  withSparseArray: true,
  withTypedArray: true,
});

describe("canonicalJson", () => {
  it("writes any value exactly as the plain recursive writer does", () => {
    fc.assert(
      fc.property(valueArb, (value) => {
        expect(canonicalJson(value)).toBe(referenceCanonicalJson(value));
      }),
      { numRuns: 500 },
    );
  });

  it("writes an object with a thousand keys in code unit order", () => {
    const keys = Array.from({ length: 1000 }, (_, i) => `k${(i * 7919) % 1000}`);
    const value = Object.fromEntries(keys.map((key, i) => [key, i]));

    expect(canonicalJson(value)).toBe(referenceCanonicalJson(value));
  });

  it("writes a string far longer than its buffer starts out", () => {
    const value = { text: "é\n😀\ud800".repeat(100_000) };

    expect(canonicalJson(value)).toBe(referenceCanonicalJson(value));
  });

  it("leaves out inherited members, as Object.keys does", () => {
    const value = Object.assign(Object.create({ inherited: 1 }), { own: 2 });

    expect(canonicalJson(value)).toBe('{"own":2}');
  });

  it("is not confused by a getter that writes canonical JSON while being written", () => {
    const inner = { b: 2, a: 1 };
    const value = {
      z: 1,
      get nested() {
        return canonicalJson(inner);
      },
    };

    expect(canonicalJson(value)).toBe('{"nested":"{\\"a\\":1,\\"b\\":2}","z":1}');
  });
});

describe("toolFingerprint", () => {
  const toolArb: fc.Arbitrary<RawTool> = fc.record(
    {
      name: textArb,
      title: textArb,
      description: textArb,
      inputSchema: fc.dictionary(keyArb, valueArb, { maxKeys: 4 }),
      outputSchema: fc.dictionary(keyArb, valueArb, { maxKeys: 2 }),
      annotations: fc.record({ readOnlyHint: fc.boolean(), title: textArb }, { requiredKeys: [] }),
      _meta: fc.dictionary(keyArb, valueArb, { maxKeys: 2 }),
    },
    { requiredKeys: ["name"] },
  );

  it("hashes the same bytes as the plain canonical JSON of what the model is shown", () => {
    fc.assert(
      fc.property(toolArb, (tool) => {
        expect(toolFingerprint(tool)).toBe(referenceFingerprint(tool));
      }),
      { numRuns: 300 },
    );
  });
});

describe("sanitizeName", () => {
  it("replaces exactly what the /[^A-Za-z0-9_]/u regex replaces", () => {
    fc.assert(
      fc.property(textArb, (name) => {
        expect(sanitizeName(name)).toBe(referenceSanitizeName(name));
      }),
      { numRuns: 1000 },
    );
  });
});

describe("normalizeCatalog", () => {
  // NULs inside names and namespaces are where the fast paths of dedupe and ordering end.
  const partArb = fc.oneof(
    fc.constantFrom(
      "a",
      "a-b",
      "a_b",
      "",
      "_",
      "__",
      "mcp__a",
      "mcp",
      "é",
      "😀",
      "\uFFFD",
      "\0",
      "a\0",
      "a\0a",
      "x__",
    ),
    fc.string({ unit: codeUnitArb, maxLength: 6 }),
    fc.string({ unit: fc.constantFrom("a", "b", "_", "-", "\0"), maxLength: 6 }),
    fc.string({ unit: "grapheme-ascii", minLength: 40, maxLength: 120 }),
  );
  const inputArb: fc.Arbitrary<CatalogInput> = fc.record(
    {
      server: partArb,
      tool: fc.record(
        { name: partArb, description: fc.string({ maxLength: 3 }) },
        { requiredKeys: ["name"] },
      ),
      connectorId: fc.constantFrom("c1", "c2", "", "\0a\0a"),
      rawNamespace: partArb,
    },
    { requiredKeys: ["server", "tool"] },
  );
  const optionsArb: fc.Arbitrary<NamingOptions> = fc.record({
    nameLimit: fc.integer({ min: 20, max: 140 }),
    prefixMcp: fc.boolean(),
    nonPrefixedServers: fc.array(partArb, { maxLength: 2 }),
  });

  it("names, orders, fingerprints and warns exactly as the plain statement of the rules", () => {
    fc.assert(
      fc.property(fc.array(inputArb, { maxLength: 30 }), optionsArb, (inputs, options) => {
        expect(normalizeCatalog(inputs, options)).toStrictEqual(referenceNormalizeCatalog(inputs, options));
      }),
      { numRuns: 500 },
    );
  });

  it("drops the second of two inputs whose identities spell the same bytes through NULs", () => {
    // `x⟨NUL⟩x⟨NUL⟩⟨NUL⟩a⟨NUL⟩a` + `a` + `a` and `x⟨NUL⟩x⟨NUL⟩` + `a⟨NUL⟩a` + `a⟨NUL⟩a` are one identity.
    const inputs: CatalogInput[] = [
      { server: "x", connectorId: "\0a\0a", tool: { name: "a" } },
      { server: "x", tool: { name: "a\0a" } },
    ];
    const result = normalizeCatalog(inputs);

    expect(result).toStrictEqual(referenceNormalizeCatalog(inputs));
    // The dropped tool's namespace claims nothing, so the kept one's needs no hash.
    expect([result.tools.map((t) => t.flatName), result.warnings]).toEqual([
      ["mcp__x__a"],
      ["skipping duplicated tool a\0a"],
    ]);
  });
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type CatalogInput, type NamingOptions, normalizeCatalog } from "../src/naming/index.js";

const VALID = /^[A-Za-z0-9_]+$/;
const utf8Bytes = (text: string) => new TextEncoder().encode(text).length;

// Names that stress the rules: unicode, empty, separators, prefixes, sanitize collisions, length.
const nameArb = fc.oneof(
  {
    arbitrary: fc.constantFrom(
      "a",
      "a-b",
      "a_b",
      "a.b",
      "a b",
      "",
      "-",
      ".",
      " ",
      "_",
      "__",
      "mcp__a",
      "mcp",
      "日本",
      "😀",
      "é",
    ),
    weight: 3,
  },
  // Pairs such as (`a__b`, `c`) and (`a`, `b__c`) share a flat name.
  { arbitrary: fc.constantFrom("a__b", "b__c", "c", "x__"), weight: 2 },
  { arbitrary: fc.string({ unit: "binary", maxLength: 12 }), weight: 1 },
  { arbitrary: fc.string({ unit: fc.constantFrom("a", "_", "-", ".", " "), maxLength: 8 }), weight: 1 },
  { arbitrary: fc.string({ unit: "grapheme-ascii", minLength: 60, maxLength: 200 }), weight: 1 },
);

const inputArb: fc.Arbitrary<CatalogInput> = fc.record(
  {
    server: nameArb,
    tool: fc.record({ name: nameArb, description: fc.string({ maxLength: 5 }) }, { requiredKeys: ["name"] }),
    connectorId: fc.constantFrom("c1", "c2"),
    rawNamespace: nameArb,
  },
  { requiredKeys: ["server", "tool"] },
);

const identity = (i: CatalogInput) =>
  `${i.server}\0${i.rawNamespace ?? i.server}\0${i.connectorId ?? ""}\0${i.tool.name}`;

// Distinct raw identities, so which duplicate comes first cannot change the output.
const inputsArb = fc.uniqueArray(inputArb, { selector: identity, maxLength: 40 });

const optionsArb = (nameLimit: fc.Arbitrary<number>): fc.Arbitrary<NamingOptions> =>
  fc.record({
    nameLimit,
    prefixMcp: fc.boolean(),
    nonPrefixedServers: fc.array(nameArb, { maxLength: 3 }),
  });

describe.each([
  ["64", fc.constant(64)],
  ["128", fc.constant(128)],
  ["anywhere from 20 to 140", fc.integer({ min: 20, max: 140 })],
])("normalizeCatalog with a name limit of %s bytes", (_label, limitArb) => {
  it("gives every tool a unique flat name within the limit, made of [A-Za-z0-9_]", () => {
    fc.assert(
      fc.property(inputsArb, optionsArb(limitArb), (inputs, options) => {
        const { tools } = normalizeCatalog(inputs, options);

        expect(new Set(tools.map((t) => t.flatName)).size).toBe(tools.length);
        for (const t of tools) {
          expect(t.flatName).toBe(`${t.callableNamespace}__${t.callableName}`);
          expect(utf8Bytes(t.flatName)).toBeLessThanOrEqual(options.nameLimit ?? 64);
          expect([t.callableNamespace, t.callableName, t.flatName].every((s) => VALID.test(s))).toBe(true);
          expect(t.hookName.startsWith("mcp__")).toBe(true);
        }
      }),
    );
  });

  it("separates two tools whose namespace and name split one flat name in different places", () => {
    const splitArb = fc
      .array(fc.stringMatching(/^[a-z0-9]{1,4}$/), { minLength: 3, maxLength: 6 })
      .chain((words) =>
        fc.tuple(
          fc.constant(words),
          fc.uniqueArray(fc.integer({ min: 1, max: words.length - 1 }), { minLength: 2, maxLength: 2 }),
        ),
      );
    fc.assert(
      fc.property(splitArb, limitArb, ([words, cuts], nameLimit) => {
        const inputs = cuts.map((cut) => ({
          server: words.slice(0, cut).join("__"),
          tool: { name: words.slice(cut).join("__") },
        }));
        const { tools } = normalizeCatalog(inputs, { nameLimit, prefixMcp: false });

        expect(tools).toHaveLength(2);
        expect(tools[0]?.flatName).not.toBe(tools[1]?.flatName);
      }),
    );
  });

  it("keeps every tool, with its raw route, exactly once", () => {
    fc.assert(
      fc.property(inputsArb, optionsArb(limitArb), (inputs, options) => {
        const { tools, warnings } = normalizeCatalog(inputs, options);
        const routes = (list: { server: string; rawName: string }[]) =>
          list.map((t) => `${t.server}\0${t.rawName}`).sort();

        expect(warnings).toEqual([]);
        expect(routes(tools)).toEqual(
          routes(inputs.map((i) => ({ server: i.server, rawName: i.tool.name }))),
        );
      }),
    );
  });

  it("gives the same output whatever the input order", () => {
    const shuffledArb = inputsArb.chain((inputs) =>
      fc.tuple(
        fc.constant(inputs),
        fc.shuffledSubarray(inputs, { minLength: inputs.length, maxLength: inputs.length }),
      ),
    );
    fc.assert(
      fc.property(shuffledArb, optionsArb(limitArb), ([inputs, shuffled], options) => {
        expect(normalizeCatalog(shuffled, options)).toEqual(normalizeCatalog(inputs, options));
      }),
    );
  });

  it("drops repeated identities with one warning each and otherwise ignores them", () => {
    const withCopiesArb = inputsArb.chain((inputs) =>
      fc.tuple(fc.constant(inputs), fc.array(fc.constantFrom(...(inputs.length > 0 ? inputs : [null])))),
    );
    fc.assert(
      fc.property(withCopiesArb, optionsArb(limitArb), ([inputs, picked], options) => {
        const copies = picked.filter((c): c is CatalogInput => c !== null);
        const result = normalizeCatalog([...inputs, ...copies], options);

        expect(result.tools).toEqual(normalizeCatalog(inputs, options).tools);
        expect(result.warnings).toEqual(copies.map((c) => `skipping duplicated tool ${c.tool.name}`));
      }),
    );
  });
});

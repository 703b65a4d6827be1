/**
 * The input-schema clean-up a model is shown (docs/reference-behavior.md §3.4, from the reference's
 * `json_schema.rs`): boolean schemas become `{type:"string"}`, `const` a one-value `enum`,
 * missing types are inferred (or the node becomes `{}`), objects and arrays get default
 * `properties` / `items`, unreachable `$defs` / `definitions` are pruned, and a schema whose
 * compact JSON is over 5,000 bytes goes through lossy passes until it fits: descriptions
 * stripped, definitions dropped, nesting deeper than 3 collapsed, compositions pruned.
 *
 * One difference: the reference measures and sends its own typed subset of JSON Schema, which
 * drops keywords it does not model (`format`, `default`, `pattern`, …). toolbus keeps them, so
 * MCP clients see them, and measures the budget on the schema as it is sent.
 */
import type { JsonObject } from "./types.js";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonMap = { [key: string]: Json };

const DEFINITION_TABLE_KEYS = ["$defs", "definitions"] as const;
type DefinitionTable = (typeof DEFINITION_TABLE_KEYS)[number];
const SCHEMA_CHILD_KEYS = ["items", "anyOf", "oneOf", "allOf"] as const;
const COMPOSITION_KEYS = ["anyOf", "oneOf", "allOf"] as const;
const PRIMITIVE_TYPES = new Set(["string", "number", "boolean", "integer", "object", "array", "null"]);

/** The reference's budget for a tool's parameters (a cheap proxy for about 1k tokens). */
export const MAX_COMPACT_SCHEMA_BYTES = 5_000;
/** Complex schemas nested deeper than this are collapsed to `{}` by the third lossy pass. */
export const MAX_COMPACT_SCHEMA_DEPTH = 3;

/** The reference's error for a schema that describes no possible arguments. */
export const NULL_ROOT_SCHEMA_ERROR = "tool input schema must not be a singleton null type";

export type CleanSchema =
  | { readonly ok: true; readonly schema: JsonObject }
  | { readonly ok: false; readonly reason: string };

/**
 * The schema a model is given for a tool's arguments (`properties` already defaulted by the
 * caller), or why the tool cannot be shown at all. Never changes `schema`.
 */
export function cleanModelSchema(schema: JsonObject): CleanSchema {
  const value = copyJson(schema) as JsonMap;
  sanitize(value);
  pruneUnreachableDefinitions(value);
  compactLargeSchema(value);
  if (value.type === "null") return { ok: false, reason: NULL_ROOT_SCHEMA_ERROR };
  return { ok: true, schema: value };
}

/** A deep copy with JSON values only (anything else, e.g. `undefined`, is left out as JSON.stringify would). */
function copyJson(value: unknown): Json {
  if (value === null || typeof value !== "object") {
    return typeof value === "string" || typeof value === "number" || typeof value === "boolean"
      ? value
      : null;
  }
  if (Array.isArray(value)) return value.map(copyJson);
  const copy: JsonMap = {};
  for (const [key, child] of Object.entries(value)) if (child !== undefined) copy[key] = copyJson(child);
  return copy;
}

function isMap(value: Json | undefined): value is JsonMap {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// --- Sanitizing ------------------------------------------------------------------------------

/** Rewrites one schema node (and its children) in place, as the reference's `sanitize_json_schema`. */
function sanitize(value: Json, replace?: (next: Json) => void): void {
  if (typeof value === "boolean") {
    // JSON Schema's boolean form (true/false): an accept-all string, as the reference coerces it.
    replace?.({ type: "string" });
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((child, index) => {
      sanitize(child, (next) => {
        value[index] = next;
      });
    });
    return;
  }
  if (!isMap(value)) return;
  const at = (key: string) => (next: Json) => {
    value[key] = next;
  };
  const properties = value.properties;
  if (isMap(properties)) {
    for (const key of Object.keys(properties)) {
      sanitize(properties[key] as Json, (next) => {
        properties[key] = next;
      });
    }
  }
  if (value.items !== undefined) sanitize(value.items, at("items"));
  const additional = value.additionalProperties;
  if (additional !== undefined && typeof additional !== "boolean")
    sanitize(additional, at("additionalProperties"));
  if (value.prefixItems !== undefined) sanitize(value.prefixItems, at("prefixItems"));
  for (const key of COMPOSITION_KEYS) if (value[key] !== undefined) sanitize(value[key], at(key));
  for (const table of DEFINITION_TABLE_KEYS) sanitizeTable(value, table);

  if ("const" in value) {
    const constant = value.const as Json;
    delete value.const;
    value.enum = [constant];
  }

  const types = schemaTypes(value);
  if (types.length === 0 && (value.$ref !== undefined || hasComposition(value))) return;
  if (types.length === 0) {
    const inferred = inferredType(value);
    if (inferred === undefined) {
      for (const key of Object.keys(value)) delete value[key];
      return;
    }
    types.push(inferred);
  }
  value.type = types.length === 1 ? (types[0] as string) : types;
  if (types.includes("object") && value.properties === undefined) value.properties = {};
  if (types.includes("array") && value.items === undefined) value.items = { type: "string" };
}

/** A definition table that is not an object is dropped; each definition in one is sanitized. */
function sanitizeTable(map: JsonMap, table: DefinitionTable): void {
  const definitions = map[table];
  if (definitions === undefined) return;
  if (!isMap(definitions)) {
    delete map[table];
    return;
  }
  for (const name of Object.keys(definitions)) {
    sanitize(definitions[name] as Json, (next) => {
      definitions[name] = next;
    });
  }
}

/** The node's known type names (unknown ones dropped), from a string or an array. */
function schemaTypes(map: JsonMap): string[] {
  const type = map.type;
  if (typeof type === "string") return PRIMITIVE_TYPES.has(type) ? [type] : [];
  if (Array.isArray(type)) {
    return type.filter((t): t is string => typeof t === "string" && PRIMITIVE_TYPES.has(t));
  }
  return [];
}

function inferredType(map: JsonMap): string | undefined {
  const has = (...keys: string[]) => keys.some((key) => map[key] !== undefined);
  if (has("properties", "required", "additionalProperties")) return "object";
  if (has("items", "prefixItems")) return "array";
  if (has("enum", "format", "maxLength")) return "string";
  if (has("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")) return "number";
  return undefined;
}

function hasComposition(map: JsonMap): boolean {
  return COMPOSITION_KEYS.some((key) => map[key] !== undefined);
}

// --- Walking schema children -----------------------------------------------------------------

/**
 * The schema children of a node, as the reference visits them: property schemas, `items`,
 * the compositions, a non-boolean `additionalProperties`, and (when asked) the definitions.
 * Each child comes with a setter that replaces it in place.
 */
function schemaChildren(
  map: JsonMap,
  definitions: "include" | "skip",
): Array<{ value: Json; replace: (next: Json) => void }> {
  const children: Array<{ value: Json; replace: (next: Json) => void }> = [];
  const properties = map.properties;
  if (isMap(properties)) {
    for (const key of Object.keys(properties)) {
      children.push({
        value: properties[key] as Json,
        replace: (next) => {
          properties[key] = next;
        },
      });
    }
  }
  for (const key of SCHEMA_CHILD_KEYS) {
    const child = map[key];
    if (child !== undefined) {
      children.push({
        value: child,
        replace: (next) => {
          map[key] = next;
        },
      });
    }
  }
  const additional = map.additionalProperties;
  if (additional !== undefined && typeof additional !== "boolean") {
    children.push({
      value: additional,
      replace: (next) => {
        map.additionalProperties = next;
      },
    });
  }
  if (definitions === "include") {
    for (const table of DEFINITION_TABLE_KEYS) {
      const entries = map[table];
      if (!isMap(entries)) continue;
      for (const name of Object.keys(entries)) {
        children.push({
          value: entries[name] as Json,
          replace: (next) => {
            entries[name] = next;
          },
        });
      }
    }
  }
  return children;
}

/**
 * Applies `visit` to a value: to each element of an array (at the same depth), or to a schema
 * node. `visit` returns a replacement for the node, or undefined to keep it (and its own walk).
 */
function walk(
  value: Json,
  depth: number,
  visit: (map: JsonMap, depth: number) => Json | undefined,
  replace: (next: Json) => void,
): void {
  if (Array.isArray(value)) {
    value.forEach((child, index) => {
      walk(child, depth, visit, (next) => {
        value[index] = next;
      });
    });
    return;
  }
  if (!isMap(value)) return;
  const replacement = visit(value, depth);
  if (replacement !== undefined) replace(replacement);
}

// --- Definitions -----------------------------------------------------------------------------

interface DefinitionPointer {
  table: DefinitionTable;
  name: string;
}

const pointerKey = (pointer: DefinitionPointer) => `${pointer.table}\u0000${pointer.name}`;

/**
 * A local reference into a root definition table (`#/$defs/Name`, also a nested pointer such
 * as `#/$defs/User/properties/name`, which keeps its parent definition reachable).
 */
function parseDefinitionRef(ref: string): DefinitionPointer | undefined {
  if (!ref.startsWith("#")) return undefined;
  let pointer: string;
  try {
    pointer = decodeURIComponent(ref.slice(1));
  } catch {
    return undefined;
  }
  if (!pointer.startsWith("/")) return undefined;
  const tokens = pointer
    .slice(1)
    .split("/")
    .map((token) => token.replaceAll("~1", "/").replaceAll("~0", "~"));
  const table = DEFINITION_TABLE_KEYS.find((candidate) => candidate === tokens[0]);
  const name = tokens[1];
  return table === undefined || name === undefined ? undefined : { table, name };
}

function refOf(map: JsonMap): DefinitionPointer | undefined {
  return typeof map.$ref === "string" ? parseDefinitionRef(map.$ref) : undefined;
}

/** Root definitions no reference reaches (from outside the tables, then transitively) are removed. */
function pruneUnreachableDefinitions(root: JsonMap): void {
  const reachable = new Set<string>();
  const pending: DefinitionPointer[] = [];
  const refsOutsideDefinitions = (value: Json) =>
    walk(
      value,
      0,
      (map) => {
        const pointer = refOf(map);
        if (pointer) pending.push(pointer);
        for (const child of schemaChildren(map, "skip")) refsOutsideDefinitions(child.value);
        return undefined;
      },
      () => {},
    );
  refsOutsideDefinitions(root);
  while (pending.length > 0) {
    const pointer = pending.pop() as DefinitionPointer;
    if (reachable.has(pointerKey(pointer))) continue;
    reachable.add(pointerKey(pointer));
    const table = root[pointer.table];
    const definition = isMap(table) ? table[pointer.name] : undefined;
    if (definition !== undefined) collectAllRefs(definition, pending);
  }
  for (const table of DEFINITION_TABLE_KEYS) {
    const definitions = root[table];
    if (!isMap(definitions)) continue;
    for (const name of Object.keys(definitions)) {
      if (!reachable.has(pointerKey({ table, name }))) delete definitions[name];
    }
    if (Object.keys(definitions).length === 0) delete root[table];
  }
}

/** Every local definition reference anywhere inside a value (any key, not only schema children). */
function collectAllRefs(value: Json, into: DefinitionPointer[]): void {
  if (Array.isArray(value)) {
    for (const child of value) collectAllRefs(child, into);
    return;
  }
  if (!isMap(value)) return;
  const pointer = refOf(value);
  if (pointer) into.push(pointer);
  for (const child of Object.values(value)) collectAllRefs(child, into);
}

// --- Compaction ------------------------------------------------------------------------------

const utf8 = new TextEncoder();

function compactBytes(value: Json): number {
  return utf8.encode(JSON.stringify(value)).length;
}

/** Lossy passes, in the reference's order, each only while the schema is still over budget. */
function compactLargeSchema(root: JsonMap): void {
  const passes: Array<(root: JsonMap) => void> = [
    stripDescriptions,
    dropDefinitions,
    collapseDeepSchemas,
    pruneCompositions,
  ];
  for (const pass of passes) {
    if (compactBytes(root) <= MAX_COMPACT_SCHEMA_BYTES) return;
    pass(root);
  }
}

/** Replaces the root's contents (a pass may turn the root itself into `{}`). */
function replaceRoot(root: JsonMap): (next: Json) => void {
  return (next) => {
    for (const key of Object.keys(root)) delete root[key];
    if (isMap(next)) Object.assign(root, next);
  };
}

function stripDescriptions(root: JsonMap): void {
  const strip = (map: JsonMap): undefined => {
    delete map.description;
    for (const child of schemaChildren(map, "include")) walk(child.value, 0, strip, child.replace);
    return undefined;
  };
  strip(root);
}

/** References into the tables become `{}` first, so nothing points at a definition that is gone. */
function dropDefinitions(root: JsonMap): void {
  const rewrite = (map: JsonMap): Json | undefined => {
    if (refOf(map)) return {};
    for (const child of schemaChildren(map, "skip")) walk(child.value, 0, rewrite, child.replace);
    return undefined;
  };
  walk(root, 0, rewrite, replaceRoot(root));
  for (const table of DEFINITION_TABLE_KEYS) delete root[table];
}

function isComplex(map: JsonMap): boolean {
  return (
    SCHEMA_CHILD_KEYS.some((key) => map[key] !== undefined) ||
    map.properties !== undefined ||
    map.additionalProperties !== undefined ||
    map.$ref !== undefined
  );
}

function collapseDeepSchemas(root: JsonMap): void {
  const collapse = (map: JsonMap, depth: number): Json | undefined => {
    if (depth >= MAX_COMPACT_SCHEMA_DEPTH && isComplex(map)) return {};
    for (const child of schemaChildren(map, "skip")) walk(child.value, depth + 1, collapse, child.replace);
    return undefined;
  };
  walk(root, 0, collapse, replaceRoot(root));
}

function pruneCompositions(root: JsonMap): void {
  const prune = (map: JsonMap): Json | undefined => {
    if (hasComposition(map)) return {};
    for (const child of schemaChildren(map, "skip")) walk(child.value, 0, prune, child.replace);
    return undefined;
  };
  walk(root, 0, prune, replaceRoot(root));
}

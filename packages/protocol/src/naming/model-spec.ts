/**
 * What a model is shown about a namespace and a tool's parameters (docs/reference-behavior.md §3.4,
 * checklist 20-21): the namespace description and the input schema it may call with.
 */

import { type CleanSchema, cleanModelSchema } from "./model-schema.js";
import { takeBytesAtCharBoundary, trimRust } from "./text.js";
import type { JsonObject } from "./types.js";

export const MAX_NAMESPACE_DESCRIPTION_BYTES = 512 * 1024;

/**
 * The trimmed server instructions, else `""`; capped. The reference falls back to `Tools for
 * working with <connector>.` for [apps] connectors, which toolbus does not have.
 */
export function namespaceDescription(instructions?: string): string {
  return takeBytesAtCharBoundary(trimRust(instructions ?? ""), MAX_NAMESPACE_DESCRIPTION_BYTES);
}

export type ModelInputSchema = CleanSchema;

/**
 * Cleaned schemas by the raw schema object they came from: a catalog is rebuilt on every change,
 * and the entries of servers that did not change keep their objects, so each is cleaned once.
 */
const cleaned = new WeakMap<object, ModelInputSchema>();

/**
 * The parameters a model is given (§3.4): `properties` defaults to `{}` when missing or null,
 * then the reference's clean-up (model-schema.ts). A schema that is not a JSON object, or whose
 * root type is `"null"`, describes no callable input: the tool cannot be shown.
 */
export function modelInputSchema(schema: unknown): ModelInputSchema {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    const kind = schema === null ? "null" : Array.isArray(schema) ? "an array" : `a ${typeof schema}`;
    return { ok: false, reason: `the input schema is ${kind}, not a JSON object` };
  }
  const known = cleaned.get(schema);
  if (known) return known;
  const object = schema as JsonObject;
  const withProperties =
    object.properties === undefined || object.properties === null ? { ...object, properties: {} } : object;
  const result = cleanModelSchema(withProperties);
  cleaned.set(schema, result);
  return result;
}

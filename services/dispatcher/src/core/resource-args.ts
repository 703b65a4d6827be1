/**
 * Arguments of the resource tools (`list_mcp_resources`, `list_mcp_resource_templates`,
 * `read_mcp_resource`) as the reference reads them (docs/reference-behavior.md §8): blank or `null`
 * means the defaults (for a read, the error `expected value`); fields of the wrong type are
 * refused in serde's words; strings are trimmed and an empty one counts as absent; a read
 * needs both fields (`<field> must be provided`). Every failure here happens before the call
 * begins, so it publishes no events.
 */
import { type JsonValue, ResourceToolName } from "@toolbus/protocol";
import { isRecord } from "./json.js";
import type { ParsedArguments } from "./tool-arguments.js";

/** `arguments` is what the model sent, for the events (`null` when blank or `null`). */
export type ListResourcesArgs = { server?: string; cursor?: string; arguments: JsonValue };
export type ReadResourceArgs = { server: string; uri: string; arguments: JsonValue };
export type ArgsResult<T> = { ok: true; value: T } | { ok: false; message: string };

const PARSE_FAILED = "failed to parse function arguments";

/** The reference's argument structs, as serde names them when a value is not one. */
const STRUCT_NAME = {
  [ResourceToolName.listResources]: "ListResourcesArgs",
  [ResourceToolName.listResourceTemplates]: "ListResourceTemplatesArgs",
  [ResourceToolName.readResource]: "ReadResourceArgs",
} as const;

type ListTool = typeof ResourceToolName.listResources | typeof ResourceToolName.listResourceTemplates;

export function parseListResourcesArgs(
  tool: ListTool,
  parsed: ParsedArguments,
): ArgsResult<ListResourcesArgs> {
  const object = argumentObject(tool, parsed);
  if (!object.ok) return object;
  if (object.value === null) return { ok: true, value: { arguments: null } };
  const fields: { server?: string; cursor?: string } = {};
  for (const field of ["server", "cursor"] as const) {
    const value = object.value[field];
    if (value === undefined || value === null) continue;
    if (typeof value !== "string") return typeMismatch(value);
    const trimmed = value.trim();
    if (trimmed !== "") fields[field] = trimmed;
  }
  return { ok: true, value: { ...fields, arguments: object.value } };
}

export function parseReadResourceArgs(parsed: ParsedArguments): ArgsResult<ReadResourceArgs> {
  const object = argumentObject(ResourceToolName.readResource, parsed);
  if (!object.ok) return object;
  const args = object.value;
  if (args === null) return { ok: false, message: `${PARSE_FAILED}: expected value` };
  for (const field of ["server", "uri"] as const) {
    const value = args[field];
    if (value !== undefined && typeof value !== "string") return typeMismatch(value);
  }
  for (const field of ["server", "uri"] as const) {
    if (args[field] === undefined)
      return { ok: false, message: `${PARSE_FAILED}: missing field \`${field}\`` };
  }
  const server = (args.server as string).trim();
  const uri = (args.uri as string).trim();
  if (server === "") return { ok: false, message: "server must be provided" };
  if (uri === "") return { ok: false, message: "uri must be provided" };
  return { ok: true, value: { server, uri, arguments: args } };
}

/** The argument object; `null` for blank arguments or a JSON `null`. */
function argumentObject(
  tool: ResourceToolName,
  parsed: ParsedArguments,
): ArgsResult<{ [key: string]: JsonValue } | null> {
  switch (parsed.kind) {
    case "none":
      return { ok: true, value: null };
    case "invalid_json":
      return { ok: false, message: `${PARSE_FAILED}: ${parsed.reason}` };
    case "object":
      return { ok: true, value: parsed.value };
    case "not_object":
      if (parsed.value === null) return { ok: true, value: null };
      return {
        ok: false,
        message: `${PARSE_FAILED}: invalid type: ${unexpected(parsed.value)}, expected struct ${STRUCT_NAME[tool]}`,
      };
  }
}

function typeMismatch(value: JsonValue): { ok: false; message: string } {
  return { ok: false, message: `${PARSE_FAILED}: invalid type: ${unexpected(value)}, expected a string` };
}

/** How serde describes a JSON value it did not expect. */
function unexpected(value: JsonValue): string {
  if (value === null) return "null";
  if (typeof value === "boolean") return `boolean \`${value}\``;
  if (typeof value === "number") {
    return Number.isInteger(value) ? `integer \`${value}\`` : `floating point \`${value}\``;
  }
  if (typeof value === "string") return `string ${JSON.stringify(value)}`;
  return Array.isArray(value) ? "sequence" : isRecord(value) ? "map" : "value";
}

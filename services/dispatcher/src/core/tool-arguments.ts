/**
 * Reading the model's raw argument text (docs/reference-behavior.md §4 step 1 and the wire rule of
 * step 6): blank means no arguments, anything else must be JSON, and a call sends only a JSON
 * object. The nesting depth is checked before parsing, so a hostile text costs one linear scan.
 */

import type { JsonValue } from "@toolbus/protocol";
import { isRecord } from "./json.js";

/** A parsed argument object, every value JSON. */
export type JsonObject = { [key: string]: JsonValue };

export const MAX_ARGUMENT_DEPTH = 512;

export type ParsedArguments =
  | { kind: "none" }
  | { kind: "object"; value: JsonObject }
  /** `message` is the model-facing result text, `err: <reason>`; `reason` the parse error alone. */
  | { kind: "invalid_json"; message: string; reason: string }
  /** Valid JSON that is not an object; the call must not reach the server. */
  | { kind: "not_object"; value: JsonValue; message: string };

export function parseToolArguments(text: string): ParsedArguments {
  if (text.trim() === "") return { kind: "none" };
  const tooDeep = findExcessiveNesting(text, MAX_ARGUMENT_DEPTH);
  if (tooDeep !== undefined) {
    return invalidJson(
      `arguments nest deeper than ${MAX_ARGUMENT_DEPTH} levels at position ${tooDeep}; send flatter arguments`,
    );
  }
  let value: JsonValue;
  try {
    value = JSON.parse(text) as JsonValue;
  } catch (error) {
    return invalidJson(error instanceof Error ? error.message : String(error));
  }
  if (isRecord(value)) return { kind: "object", value };
  return { kind: "not_object", value, message: notAnObjectMessage(value) };
}

function invalidJson(reason: string): ParsedArguments {
  return { kind: "invalid_json", message: `err: ${reason}`, reason };
}

export function notAnObjectMessage(value: JsonValue): string {
  return `MCP tool arguments must be a JSON object, got ${JSON.stringify(value)}`;
}

/** The offset of the first bracket that opens level `maxDepth + 1`, ignoring string contents. */
function findExcessiveNesting(text: string, maxDepth: number): number | undefined {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c /* \ */) i++;
      else if (ch === 0x22 /* " */) inString = false;
    } else if (ch === 0x22) {
      inString = true;
    } else if (ch === 0x5b /* [ */ || ch === 0x7b /* { */) {
      depth++;
      if (depth > maxDepth) return i;
    } else if (ch === 0x5d /* ] */ || ch === 0x7d /* } */) {
      depth--;
    }
  }
  return undefined;
}

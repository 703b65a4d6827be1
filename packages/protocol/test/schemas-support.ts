/**
 * Shared pieces of the schema tables: fixtures (a raw tool and result carrying fields no MCP
 * revision defines yet), the case shape, the expected zod messages, and the table runner.
 */
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import * as schemas from "../src/schemas/index.js";
import { parseWith } from "../src/validation.js";

export const FINGERPRINT = "0f".repeat(32);
export const AT = "2026-11-30T05:20:28.000Z";
export const LATER = "2026-11-30T05:25:28.000+00:00";
export const MiB = 1024 * 1024;

/** A raw MCP tool with a field no MCP revision defines yet: it must survive every hop. */
export const RAW_TOOL = {
  name: "create-issue",
  title: "Create issue",
  description: "Open an issue.",
  inputSchema: { type: "object", properties: { title: { type: "string" } }, required: ["title"] },
  annotations: { readOnlyHint: false, destructiveHint: false, futureHint: 1 },
  _meta: { "ui/resourceUri": "ui://issues/new" },
  execution: { taskSupport: "optional" },
};

export const RAW_RESULT = {
  content: [
    { type: "text", text: "created #7", _meta: { "codex/encryptedContent": false } },
    { type: "image", data: "aGk=", mimeType: "image/png" },
    { type: "hologram", frames: 3 },
  ],
  structuredContent: { id: 7 },
  isError: false,
  _meta: { trace: "t-1" },
};

export const TOOL_ENTRY = {
  server: "github",
  rawName: "create-issue",
  callableNamespace: "mcp__github",
  callableName: "create_issue",
  flatName: "mcp__github__create_issue",
  hookName: "mcp__github__create_issue",
  fingerprint: FINGERPRINT,
  revision: 12,
  title: "Create issue",
  description: "Open an issue.",
  inputSchema: RAW_TOOL.inputSchema,
  annotations: RAW_TOOL.annotations,
  readOnlyHint: false,
  supportsParallel: false,
  exposure: "deferred",
};

export type Invalid = readonly [why: string, input: unknown, message: string];

export interface MessageCase {
  /** Valid input; parsing it plus an unknown top-level field gives back exactly this. */
  readonly valid: Record<string, unknown>;
  /** Raw MCP objects keep unknown fields instead of dropping them. */
  readonly loose?: boolean;
  readonly invalid: readonly Invalid[];
}

/** `base` with `key` set to `value` (or removed when `value` is `undefined`). */
export function withField(
  base: Record<string, unknown>,
  key: string,
  value: unknown,
): Record<string, unknown> {
  const copy = { ...base };
  if (value === undefined) delete copy[key];
  else copy[key] = value;
  return copy;
}

export const missing = (field: string, expected = "string") =>
  `${field}: Invalid input: expected ${expected}, received undefined`;
export const wrongType = (field: string, expected: string, received: string) =>
  `${field}: Invalid input: expected ${expected}, received ${received}`;
export const tooLongId = (field: string) => `${field}: Too big: expected string to have <=256 characters`;
export const tooManyBytes = (field: string, bytes: number) =>
  `${field}: Too big: expected string to have <=${bytes} bytes`;
export const BAD_SERVER = "server: must match pattern ^[a-zA-Z0-9_-]+$";
export const LONG_ID = "c".repeat(257);

export type MessageCases = Readonly<Record<string, MessageCase>>;

/** The exported `<name>Schema`. */
export function schemaNamed(name: string): z.ZodType {
  const schema = (schemas as Record<string, unknown>)[`${name}Schema`];
  if (schema === undefined) throw new Error(`@toolbus/protocol exports no ${name}Schema`);
  return schema as z.ZodType;
}

/**
 * For each case: the valid sample round-trips, an unknown field is dropped (kept when the
 * schema is a raw MCP object), and every invalid variant fails with exactly its message.
 */
export function describeMessageCases(cases: MessageCases): void {
  describe.each(Object.entries(cases))("%s", (name, sample) => {
    const schema = schemaNamed(name);

    it("accepts the valid sample and gives it back unchanged", () => {
      expect(parseWith(schema, sample.valid)).toStrictEqual({ ok: true, value: sample.valid });
    });

    if (sample.loose === true) {
      it("keeps a field it does not know (raw MCP object)", () => {
        const input = { ...sample.valid, fromNewerMcp: { x: 1 } };
        expect(parseWith(schema, input)).toStrictEqual({ ok: true, value: input });
      });
    } else {
      it("drops a field it does not know", () => {
        expect(parseWith(schema, { ...sample.valid, fromNewerClient: { x: 1 } })).toStrictEqual({
          ok: true,
          value: sample.valid,
        });
      });
    }

    it.each(sample.invalid)("rejects it when %s, naming the field", (_why, input, message) => {
      expect(parseWith(schema, input)).toStrictEqual({ ok: false, message });
    });
  });
}

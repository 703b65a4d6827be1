import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  CallToolResultSchema,
  ContentBlockSchema,
  McpServerInfoSchema,
  ResourceContentSchema,
  ResourceSchema,
  ResourceTemplateSchema,
  ToolSchema,
} from "../src/schemas/index.js";
import { parseWith } from "../src/validation.js";
import { RAW_RESULT, RAW_TOOL } from "./schemas-support.js";

describe("raw MCP objects", () => {
  it.each([
    ["Tool", ToolSchema, RAW_TOOL],
    ["CallToolResult", CallToolResultSchema, RAW_RESULT],
    [
      "McpServerInfo",
      McpServerInfoSchema,
      { name: "gh", version: "1.2.0", websiteUrl: "https://x", vendor: [1] },
    ],
    [
      "Resource",
      ResourceSchema,
      { uri: "file:///a", name: "a", size: 3, annotations: { audience: ["user"] }, future: { y: 2 } },
    ],
    ["ResourceTemplate", ResourceTemplateSchema, { uriTemplate: "file:///{p}", name: "files", future: true }],
    ["text ResourceContent", ResourceContentSchema, { uri: "file:///a", text: "hi", future: 1 }],
    [
      "blob ResourceContent",
      ResourceContentSchema,
      { uri: "file:///a", blob: "aGk=", mimeType: "image/png" },
    ],
  ])("pass a %s through untouched, fields from newer MCP revisions included", (_name, schema, raw) => {
    expect(parseWith(schema, raw)).toStrictEqual({ ok: true, value: raw });
  });

  it("keeps any extra fields a server adds to a tool", () => {
    const known = new Set([
      "name",
      "title",
      "description",
      "inputSchema",
      "outputSchema",
      "annotations",
      "icons",
      "_meta",
    ]);
    const extras = fc.dictionary(
      fc.string().filter((key) => !known.has(key) && key !== "__proto__"),
      fc.jsonValue(),
    );
    fc.assert(
      fc.property(extras, (extra) => {
        const tool = { ...extra, name: "t", inputSchema: { type: "object" } };
        expect(parseWith(ToolSchema, tool)).toStrictEqual({ ok: true, value: tool });
      }),
    );
  });

  it.each([
    ["text", { type: "text", text: "hi" }],
    ["image", { type: "image", data: "aGk=", mimeType: "image/png" }],
    ["audio", { type: "audio", data: "aGk=", mimeType: "audio/wav" }],
    ["resource_link", { type: "resource_link", uri: "file:///a", name: "a" }],
    ["resource", { type: "resource", resource: { uri: "file:///a", text: "hi" } }],
    ["an unknown type", { type: "hologram", frames: 3 }],
  ] as const)("accepts a %s content block as it is", (_name, block) => {
    expect(parseWith(ContentBlockSchema, block)).toStrictEqual({ ok: true, value: block });
  });

  it.each([
    [
      "a text block without text",
      { type: "text" },
      "text: Invalid input: expected string, received undefined",
    ],
    [
      "an image block without mimeType",
      { type: "image", data: "aGk=" },
      "mimeType: Invalid input: expected string, received undefined",
    ],
    [
      "an embedded resource with neither text nor blob",
      { type: "resource", resource: { uri: "file:///a" } },
      "resource: Invalid input: expected resource content with a uri and a text or blob string",
    ],
    ["a block without a type", { text: "hi" }, "type: Invalid input: expected string, received undefined"],
  ])("rejects %s, naming the field", (_name, block, message) => {
    expect(parseWith(ContentBlockSchema, block)).toStrictEqual({ ok: false, message });
  });

  it("accepts a result whose structuredContent is null (the model then sees the content)", () => {
    const raw = { content: [], structuredContent: null };
    expect(parseWith(CallToolResultSchema, raw)).toStrictEqual({ ok: true, value: raw });
  });

  it("rejects a result without content, naming the field", () => {
    expect(parseWith(CallToolResultSchema, { structuredContent: {} })).toStrictEqual({
      ok: false,
      message: "content: Invalid input: expected array, received undefined",
    });
  });

  it("rejects a tool whose input schema is not an object, naming the field", () => {
    expect(parseWith(ToolSchema, { name: "t", inputSchema: "object" })).toStrictEqual({
      ok: false,
      message: "inputSchema: Invalid input: expected record, received string",
    });
  });
});

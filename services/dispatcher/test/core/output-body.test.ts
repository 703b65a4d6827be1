import type { CallToolResult } from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import { selectOutputBody } from "../../src/core/output-body.js";

const hello = { type: "text", text: "hello" } as const;
const png = { type: "image", data: "Zm9v", mimeType: "image/png" } as const;

describe("selectOutputBody (§7 body selection)", () => {
  it.each<{ name: string; result: CallToolResult; output: ReturnType<typeof selectOutputBody> }>([
    {
      name: "[47] text-only content is the compact JSON of the raw blocks",
      result: { content: [hello, { type: "text", text: "world", _meta: { a: 1 } }] },
      output: {
        success: true,
        body: '[{"type":"text","text":"hello"},{"type":"text","text":"world","_meta":{"a":1}}]',
      },
    },
    {
      name: "[47] structuredContent wins over the content",
      result: { content: [hello, png], structuredContent: { bytes: 5, items: ["a"] } },
      output: { success: true, body: '{"bytes":5,"items":["a"]}' },
    },
    {
      name: "a null structuredContent is ignored",
      result: { content: [hello], structuredContent: null },
      output: { success: true, body: '[{"type":"text","text":"hello"}]' },
    },
    {
      name: "[48] an image turns the body into content items",
      result: { content: [hello, png] },
      output: {
        success: true,
        body: [
          { type: "input_text", text: "hello" },
          { type: "input_image", imageUrl: "data:image/png;base64,Zm9v", detail: "high" },
        ],
      },
    },
    {
      name: "image data that is already a data URL is kept; the detail comes from _meta",
      result: {
        content: [
          {
            type: "image",
            data: "data:image/gif;base64,R0lG",
            mimeType: "image/png",
            _meta: { "codex/imageDetail": "low" },
          },
        ],
      },
      output: {
        success: true,
        body: [{ type: "input_image", imageUrl: "data:image/gif;base64,R0lG", detail: "low" }],
      },
    },
    {
      name: "an unknown detail and a missing MIME type fall back to defaults",
      result: {
        content: [
          { type: "image", data: "AAAA", _meta: { "codex/imageDetail": "ultra" } },
        ] as CallToolResult["content"],
      },
      output: {
        success: true,
        body: [
          { type: "input_image", imageUrl: "data:application/octet-stream;base64,AAAA", detail: "high" },
        ],
      },
    },
    {
      name: "audio becomes an input_audio item with a data URL",
      result: { content: [{ type: "audio", data: "YmFy", mimeType: "audio/wav" }] },
      output: { success: true, body: [{ type: "input_audio", data: "data:audio/wav;base64,YmFy" }] },
    },
    {
      name: "an encrypted text block wins even over structuredContent",
      result: {
        content: [hello, { type: "text", text: "opaque", _meta: { "codex/encryptedContent": true } }],
        structuredContent: { x: 1 },
      },
      output: {
        success: true,
        body: [
          { type: "input_text", text: "hello" },
          { type: "encrypted_content", encryptedContent: "opaque" },
        ],
      },
    },
    {
      name: "encryption needs the boolean true",
      result: { content: [{ type: "text", text: "plain", _meta: { "codex/encryptedContent": "true" } }] },
      output: {
        success: true,
        body: '[{"type":"text","text":"plain","_meta":{"codex/encryptedContent":"true"}}]',
      },
    },
    {
      name: "beside media, an unknown block reaches the model as its JSON",
      result: { content: [{ type: "resource_link", uri: "file:///a", name: "a" }, png] },
      output: {
        success: true,
        body: [
          { type: "input_text", text: '{"type":"resource_link","uri":"file:///a","name":"a"}' },
          { type: "input_image", imageUrl: "data:image/png;base64,Zm9v", detail: "high" },
        ],
      },
    },
    {
      name: "isError true means no success",
      result: { content: [hello], isError: true },
      output: { success: false, body: '[{"type":"text","text":"hello"}]' },
    },
    {
      name: "isError false is a success",
      result: { content: [], isError: false },
      output: { success: true, body: "[]" },
    },
  ])("$name", ({ result, output }) => {
    expect(selectOutputBody(result)).toEqual(output);
  });
});

describe('`codex/imageDetail: "original"` (§7)', () => {
  const image = (detail: string): CallToolResult => ({
    content: [{ type: "image", data: "Zm9v", mimeType: "image/png", _meta: { "codex/imageDetail": detail } }],
  });
  const url = "data:image/png;base64,Zm9v";

  it("is dropped when the model cannot take original detail, as the reference does", () => {
    expect([
      selectOutputBody(image("original")),
      selectOutputBody(image("original"), { imageDetailOriginal: false }),
    ]).toEqual([
      { success: true, body: [{ type: "input_image", imageUrl: url }] },
      { success: true, body: [{ type: "input_image", imageUrl: url }] },
    ]);
  });

  it("is kept for a model that takes it; other details never depend on it", () => {
    expect([
      selectOutputBody(image("original"), { imageDetailOriginal: true }),
      selectOutputBody(image("low")),
    ]).toEqual([
      { success: true, body: [{ type: "input_image", imageUrl: url, detail: "original" }] },
      { success: true, body: [{ type: "input_image", imageUrl: url, detail: "low" }] },
    ]);
  });
});

import { describe, expect, it } from "vitest";
import { base64Bytes, renderCallResult } from "../../src/core/output-body.js";

describe("renderCallResult", () => {
  it("prints the text the tool answered, and nothing of the model's wall-time header or JSON", () => {
    expect(renderCallResult({ content: [{ type: "text", text: "Echo: hi" }] })).toBe("Echo: hi");
  });

  it("prints text blocks one after another and other content as one line each: type, MIME type, size", () => {
    expect(
      renderCallResult({
        content: [
          { type: "text", text: "two lines\nof text" },
          { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
          { type: "audio", data: "UklGRiQAAABXQVZF", mimeType: "audio/wav" },
          { type: "resource_link", uri: "file:///notes.md", name: "notes", mimeType: "text/markdown" },
          { type: "resource", resource: { uri: "file:///a.txt", mimeType: "text/plain", text: "héllo" } },
          { type: "resource", resource: { uri: "file:///b.bin", blob: "YWJj" } },
          { type: "hologram", frames: 3 },
        ],
      }),
    ).toBe(
      [
        "two lines\nof text",
        "[image, image/png, 8 B]",
        "[audio, audio/wav, 12 B]",
        "[resource link, file:///notes.md, text/markdown]",
        "[resource, file:///a.txt, text/plain, 6 B]",
        "[resource, file:///b.bin, 3 B]",
        "[hologram content]",
      ].join("\n"),
    );
  });

  it("prints the structured content as JSON when there is no other content", () => {
    expect(renderCallResult({ content: [], structuredContent: { sum: 3 } })).toBe('{\n  "sum": 3\n}');
  });
});

describe("base64Bytes", () => {
  it.each([
    ["", 0],
    ["YQ==", 1],
    ["YWI=", 2],
    ["YWJj", 3],
  ])("%j decodes to %i bytes", (text, bytes) => {
    expect(base64Bytes(text)).toBe(bytes);
  });
});

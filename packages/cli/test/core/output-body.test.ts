import { describe, expect, it } from "vitest";
import { base64Bytes, renderOutputBody } from "../../src/core/output-body.js";

describe("renderOutputBody", () => {
  it("prints a string body as it is", () => {
    expect(renderOutputBody("Wall time: 0.1000 seconds\nOutput:\nhello")).toBe(
      "Wall time: 0.1000 seconds\nOutput:\nhello",
    );
  });

  it("prints text items one per line and media as a short placeholder", () => {
    expect(
      renderOutputBody([
        { type: "input_text", text: "Wall time: 0.1000 seconds\nOutput:" },
        { type: "input_image", imageUrl: "data:image/png;base64,iVBORw0KGgo=" },
        { type: "input_image", imageUrl: "https://example.com/cat.png" },
        { type: "input_audio", data: "UklGRiQAAABXQVZF", format: "wav" },
        { type: "encrypted_content", encryptedContent: "opaque" },
      ]),
    ).toBe(
      [
        "Wall time: 0.1000 seconds\nOutput:",
        "[image: image/png, 8 B]",
        "[image: https://example.com/cat.png]",
        "[audio: wav, 12 B]",
        "[encrypted content]",
      ].join("\n"),
    );
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

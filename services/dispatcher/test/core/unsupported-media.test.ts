import type { CallToolResult } from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import { omitUnsupportedMedia } from "../../src/core/unsupported-media.js";

const media: CallToolResult = {
  content: [
    { type: "image", data: "Zm9v", mimeType: "image/png" },
    { type: "audio", data: "YmFy", mimeType: "audio/wav" },
    { type: "text", text: "hello" },
  ],
  structuredContent: { x: 1 },
  isError: false,
  _meta: { k: "v" },
};
const imageText = {
  type: "text",
  text: "<image content omitted because you do not support image input>",
} as const;
const audioText = {
  type: "text",
  text: "<audio content omitted because you do not support audio input>",
} as const;

describe("[48] omitUnsupportedMedia (§11 tests 25–26)", () => {
  it.each([
    {
      name: "a text-only model gets placeholders for images and audio",
      model: { images: false, audio: false },
      content: [imageText, audioText, media.content[2]],
    },
    {
      name: "by default images pass and audio is replaced",
      model: {},
      content: [media.content[0], audioText, media.content[2]],
    },
    {
      name: "a model with audio but no images gets only the image placeholder",
      model: { images: false, audio: true },
      content: [imageText, media.content[1], media.content[2]],
    },
  ])("$name", ({ model, content }) => {
    expect(omitUnsupportedMedia(media, model)).toEqual({ ...media, content });
  });

  it("leaves the result untouched when the model takes every medium", () => {
    expect(omitUnsupportedMedia(media, { images: true, audio: true })).toBe(media);
  });
});

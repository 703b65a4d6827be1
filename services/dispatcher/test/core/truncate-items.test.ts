import type { ContentItem as OutputItem } from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import { truncateText } from "../../src/core/truncate.js";
import { truncateOutputItems } from "../../src/core/truncate-items.js";

const text = (t: string): OutputItem => ({ type: "input_text", text: t });
const image: OutputItem = { type: "input_image", imageUrl: "data:image/png;base64,AAAA", detail: "high" };
const encrypted: OutputItem = { type: "encrypted_content", encryptedContent: "enc_opaque" };
/** 4 bytes of data: an estimated 1 token, 4 bytes of budget. */
const smallAudio: OutputItem = { type: "input_audio", data: "data" };
/** 9 bytes of data: an estimated 3 tokens, 12 bytes of budget. */
const audio: OutputItem = { type: "input_audio", data: "audio:one" };

describe("truncateOutputItems (a shared budget)", () => {
  it.each([
    {
      name: "items within the budget are unchanged",
      items: [text("abc"), image, text("def")],
      policy: { mode: "bytes", limit: 6 },
      out: [text("abc"), image, text("def")],
    },
    {
      name: "the first text that overflows is truncated to the rest; images and encrypted items stay",
      items: [text("abcdefgh"), encrypted, audio],
      policy: { mode: "bytes", limit: 2 },
      out: [text("a…6 chars truncated…h"), encrypted, text("[omitted 1 audio items ...]")],
    },
    {
      name: "audio that fits is kept and charged against the byte budget",
      items: [smallAudio, text("abcdefgh")],
      policy: { mode: "bytes", limit: 5 },
      out: [smallAudio, text(truncateText("abcdefgh", { mode: "bytes", limit: 1 }))],
    },
    {
      name: "audio is charged in tokens under a token budget",
      items: [audio, text("abcdefgh")],
      policy: { mode: "tokens", limit: 4 },
      out: [audio, text("ab…1 tokens truncated…gh")],
    },
    {
      name: "text after the budget runs out is dropped and counted",
      items: [text("abcd"), text("efgh"), image, text("ijkl"), text("mnop")],
      policy: { mode: "bytes", limit: 6 },
      out: [text("abcd"), text("e…2 chars truncated…h"), image, text("[omitted 2 text items ...]")],
    },
    {
      name: "empty text items are dropped without being counted",
      items: [text(""), text("abc"), text("")],
      policy: { mode: "bytes", limit: 1 },
      out: [text("…2 chars truncated…c")],
    },
    {
      name: "both omission notes appear, text first",
      items: [text("abcdef"), audio, text("ghi")],
      policy: { mode: "bytes", limit: 6 },
      out: [text("abcdef"), text("[omitted 1 text items ...]"), text("[omitted 1 audio items ...]")],
    },
  ] as const)("$name", ({ items, policy, out }) => {
    expect(truncateOutputItems(items, policy)).toEqual(out);
  });

  it("keeps two chunks whole, truncates the third and omits the rest under a token budget", () => {
    const chunk =
      "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega.\n";
    const chunkTokens = Math.ceil(chunk.length / 4);
    const items = [text(chunk), text(chunk), image, text(chunk.repeat(10)), text(chunk), text(chunk)];
    expect(truncateOutputItems(items, { mode: "tokens", limit: chunkTokens * 3 })).toEqual([
      text(chunk),
      text(chunk),
      image,
      text(truncateText(chunk.repeat(10), { mode: "tokens", limit: chunkTokens })),
      text("[omitted 2 text items ...]"),
    ]);
  });
});

import { describe, expect, it } from "vitest";
import { type DecodedMessage, decodeMemoryMessage } from "../../src/core/memory-message.js";
import { A, answer, B, citation } from "../citations.js";

const json = (value: unknown) => JSON.stringify(value);

describe("decodeMemoryMessage", () => {
  const cases: Array<{ name: string; text: string; decoded: DecodedMessage }> = [
    {
      name: "[57] counts each distinct cited id once per message, as the reference's parse de-duplicates",
      text: json({ messageId: "m1", text: answer([A, A, B]) }),
      decoded: { ok: true, messageId: "m1", threadIds: [A, B] },
    },
    {
      name: "[57] de-duplicates ids across several spans of one message, in first-seen order",
      text: json({ messageId: "m1", text: `${citation([B])} and later ${citation([A, B])}` }),
      decoded: { ok: true, messageId: "m1", threadIds: [B, A] },
    },
    {
      name: "accepts the legacy <thread_ids> block",
      text: json({ messageId: "m1", text: answer([B], "thread_ids") }),
      decoded: { ok: true, messageId: "m1", threadIds: [B] },
    },
    {
      name: "ignores ids that are not UUIDs and writes UUIDs in canonical form",
      text: json({ messageId: "m1", text: answer(["not-a-uuid", "12345", A.toUpperCase(), `{${B}}`]) }),
      decoded: { ok: true, messageId: "m1", threadIds: [A, B] },
    },
    {
      name: "counts nothing for a message without a citation",
      text: json({ messageId: "m1", threadId: "t1", text: "plain answer", planMode: true }),
      decoded: { ok: true, messageId: "m1", threadIds: [] },
    },
    {
      name: "counts the citation of an unterminated span at the end",
      text: json({ messageId: "m1", text: `answer <oai-mem-citation><rollout_ids>\n${A}\n</rollout_ids>` }),
      decoded: { ok: true, messageId: "m1", threadIds: [A] },
    },
    {
      name: "rejects a body that is not JSON",
      text: "{not json",
      decoded: {
        ok: false,
        error: expect.stringMatching(/^the message is not valid JSON \(.+\)$/) as unknown as string,
        messageId: null,
      },
    },
    {
      name: "rejects a message without a messageId",
      text: json({ text: "hello" }),
      decoded: {
        ok: false,
        error:
          "the message is not a MemoryMessage (messageId: Invalid input: expected string, received undefined)",
        messageId: null,
      },
    },
    {
      name: "rejects a message whose text is not a string, keeping its messageId for the listing",
      text: json({ messageId: "m9", text: 5 }),
      decoded: {
        ok: false,
        error: "the message is not a MemoryMessage (text: Invalid input: expected string, received number)",
        messageId: "m9",
      },
    },
    {
      name: "rejects JSON that is not an object",
      text: json(["m1"]),
      decoded: {
        ok: false,
        error: "the message is not a MemoryMessage (Invalid input: expected object, received array)",
        messageId: null,
      },
    },
  ];

  it.each(cases)("$name", ({ text, decoded }) => {
    expect(decodeMemoryMessage(text)).toEqual(decoded);
  });
});

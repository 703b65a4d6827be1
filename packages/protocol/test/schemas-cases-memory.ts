/** Sample memory messages: message, strip and usage. */
import {
  LONG_ID,
  type MessageCases,
  MiB,
  missing,
  tooLongId,
  tooManyBytes,
  wrongType,
} from "./schemas-support.js";

export const MEMORY_CASES: MessageCases = {
  MemoryMessage: {
    valid: {
      messageId: "msg-1",
      threadId: "thread-1",
      text: "hello<oai-mem-citation>x</oai-mem-citation>",
      planMode: false,
    },
    invalid: [
      ["messageId is over 256 characters", { messageId: LONG_ID, text: "t" }, tooLongId("messageId")],
      [
        "the text is over 16 MiB",
        { messageId: "m", text: "t".repeat(16 * MiB + 1) },
        tooManyBytes("text", 16 * MiB),
      ],
      ["the text is missing", { messageId: "m" }, missing("text")],
    ],
  },
  MemoryStripRequest: {
    valid: { text: "hello world", planMode: true },
    invalid: [
      ["planMode is a string", { text: "t", planMode: "yes" }, wrongType("planMode", "boolean", "string")],
    ],
  },
  MemoryStripResult: {
    valid: {
      visibleText: "hello world",
      citation: {
        entries: [{ path: "MEMORY.md", lineStart: 1, lineEnd: 2, note: "x" }],
        rolloutIds: ["019c6e27-e55b-73d1-87d8-4e01f1f75043"],
      },
    },
    invalid: [
      [
        "the citation is missing rather than null",
        { visibleText: "" },
        "citation: Invalid input: expected object, received undefined",
      ],
      [
        "a line number is negative",
        {
          visibleText: "",
          citation: { entries: [{ path: "p", lineStart: -1, lineEnd: 2, note: "" }], rolloutIds: [] },
        },
        "citation.entries.0.lineStart: Too small: expected number to be >=0",
      ],
    ],
  },
  MemoryUsageRequest: {
    valid: { rolloutIds: ["r1", "r2"], limit: 50 },
    invalid: [
      [
        "a rollout id is empty",
        { rolloutIds: [""] },
        "rolloutIds.0: Too small: expected string to have >=1 characters",
      ],
      ["the limit is over the maximum", { limit: 1001 }, "limit: Too big: expected number to be <=1000"],
    ],
  },
  MemoryUsageResult: {
    valid: {
      usage: [
        { rolloutId: "r1", usageCount: 2, lastUsage: 1_796_000_000 },
        { rolloutId: "r2", usageCount: 0, lastUsage: null },
      ],
    },
    invalid: [
      [
        "usageCount is fractional",
        { usage: [{ rolloutId: "r1", usageCount: 0.5, lastUsage: null }] },
        wrongType("usage.0.usageCount", "int", "number"),
      ],
    ],
  },
};

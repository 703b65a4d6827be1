import type { LoggingLevel } from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import { type LogLevelChoice, passesLogLevel, requestLogLevel } from "../../src/core/log-level.js";
import { supportsElicitation } from "../../src/core/session-record.js";

describe("log level", () => {
  it.each<[LoggingLevel, LogLevelChoice, boolean]>([
    ["debug", undefined, true],
    ["emergency", "none", false],
    ["warning", "warning", true],
    ["error", "warning", true],
    ["info", "warning", false],
    ["emergency", "emergency", true],
  ])("%s passes %s: %s", (level, minimum, expected) => {
    expect(passesLogLevel(level, minimum)).toBe(expected);
  });

  it("a 2026-07-28 request that names no level, or one MCP does not have, gets no messages", () => {
    expect([requestLogLevel(undefined), requestLogLevel("loud"), requestLogLevel("info")]).toEqual([
      "none",
      "none",
      "info",
    ]);
  });
});

describe("elicitation support", () => {
  it.each<[Record<string, unknown>, "form" | "url", boolean]>([
    [{ elicitation: {} }, "form", true],
    [{ elicitation: {} }, "url", false],
    [{ elicitation: { url: {} } }, "url", true],
    [{ elicitation: { url: {} } }, "form", false],
    [{ elicitation: { form: {}, url: {} } }, "form", true],
    [{}, "form", false],
  ])("%j supports %s: %s", (capabilities, mode, expected) => {
    expect(supportsElicitation(capabilities, mode)).toBe(expected);
  });
});

import type { LoggingLevel } from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import { passesLogLevel } from "../../src/core/log-level.js";
import { supportsElicitation } from "../../src/core/session-record.js";

describe("log level", () => {
  it.each<[LoggingLevel, LoggingLevel | undefined, boolean]>([
    ["debug", undefined, true],
    ["warning", "warning", true],
    ["error", "warning", true],
    ["info", "warning", false],
    ["emergency", "emergency", true],
  ])("%s passes %s: %s", (level, minimum, expected) => {
    expect(passesLogLevel(level, minimum)).toBe(expected);
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

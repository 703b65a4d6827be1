import { describe, expect, it } from "vitest";
import { parseListResourcesArgs, parseReadResourceArgs } from "../../src/core/resource-args.js";

describe("resource tool arguments", () => {
  it.each([
    { text: "", result: { ok: true, value: {} } },
    { text: "null", result: { ok: true, value: {} } },
    { text: "{}", result: { ok: true, value: {} } },
    {
      text: '{"server":" docs ","cursor":"c1"}',
      result: { ok: true, value: { server: "docs", cursor: "c1" } },
    },
    { text: '{"server":"  "}', result: { ok: true, value: {} } },
    {
      text: '{"cursor":"c1"}',
      result: { ok: false, message: "cursor can only be used when a server is specified" },
    },
  ])("lists with $text", ({ text, result }) => {
    expect(parseListResourcesArgs(text)).toEqual(result);
  });

  it.each([
    {
      text: '{"server":"docs","uri":"file:///a"}',
      result: { ok: true, value: { server: "docs", uri: "file:///a" } },
    },
    { text: '{"server":" ","uri":"x"}', result: { ok: false, message: "server must be provided" } },
    { text: '{"server":"docs"}', result: { ok: false, message: "uri must be provided" } },
    { text: "", result: { ok: false, message: "failed to parse function arguments: expected value" } },
    { text: "null", result: { ok: false, message: "failed to parse function arguments: expected value" } },
  ])("reads with $text", ({ text, result }) => {
    expect(parseReadResourceArgs(text)).toEqual(result);
  });

  it("names the JSON problem for invalid arguments", () => {
    const result = parseListResourcesArgs("{nope");
    expect(result.ok).toBe(false);
    expect(!result.ok && result.message.startsWith("failed to parse function arguments: ")).toBe(true);
  });
});

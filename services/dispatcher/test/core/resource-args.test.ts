import { describe, expect, it } from "vitest";
import { parseListResourcesArgs, parseReadResourceArgs } from "../../src/core/resource-args.js";
import { parseToolArguments } from "../../src/core/tool-arguments.js";

const list = (text: string) => parseListResourcesArgs("list_mcp_resources", parseToolArguments(text));
const read = (text: string) => parseReadResourceArgs(parseToolArguments(text));

describe("resource tool arguments (§8)", () => {
  it.each([
    { text: "", result: { ok: true, value: { arguments: null } } },
    { text: "null", result: { ok: true, value: { arguments: null } } },
    { text: "{}", result: { ok: true, value: { arguments: {} } } },
    {
      text: '{"server":" docs ","cursor":"c1"}',
      result: {
        ok: true,
        value: { server: "docs", cursor: "c1", arguments: { server: " docs ", cursor: "c1" } },
      },
    },
    {
      text: '{"server":"  ","other":1}',
      result: { ok: true, value: { arguments: { server: "  ", other: 1 } } },
    },
    { text: '{"server":null}', result: { ok: true, value: { arguments: { server: null } } } },
    // The cursor rule is checked once the call has begun (it has events), not here.
    { text: '{"cursor":"c1"}', result: { ok: true, value: { cursor: "c1", arguments: { cursor: "c1" } } } },
    {
      text: '{"server":5}',
      result: {
        ok: false,
        message: "failed to parse function arguments: invalid type: integer `5`, expected a string",
      },
    },
    {
      text: "[1]",
      result: {
        ok: false,
        message:
          "failed to parse function arguments: invalid type: sequence, expected struct ListResourcesArgs",
      },
    },
  ])("lists with $text", ({ text, result }) => {
    expect(list(text)).toEqual(result);
  });

  it("names the templates tool's struct", () => {
    expect(parseListResourcesArgs("list_mcp_resource_templates", parseToolArguments('"x"'))).toEqual({
      ok: false,
      message:
        'failed to parse function arguments: invalid type: string "x", expected struct ListResourceTemplatesArgs',
    });
  });

  it.each([
    {
      text: '{"server":" docs ","uri":"file:///a"}',
      result: {
        ok: true,
        value: { server: "docs", uri: "file:///a", arguments: { server: " docs ", uri: "file:///a" } },
      },
    },
    { text: '{"server":" ","uri":"x"}', result: { ok: false, message: "server must be provided" } },
    { text: '{"server":"docs","uri":""}', result: { ok: false, message: "uri must be provided" } },
    {
      text: '{"server":"docs"}',
      result: { ok: false, message: "failed to parse function arguments: missing field `uri`" },
    },
    {
      text: '{"server":true,"uri":"x"}',
      result: {
        ok: false,
        message: "failed to parse function arguments: invalid type: boolean `true`, expected a string",
      },
    },
    {
      text: '{"server":"docs","uri":null}',
      result: {
        ok: false,
        message: "failed to parse function arguments: invalid type: null, expected a string",
      },
    },
    { text: "", result: { ok: false, message: "failed to parse function arguments: expected value" } },
    { text: "null", result: { ok: false, message: "failed to parse function arguments: expected value" } },
    {
      text: "1.5",
      result: {
        ok: false,
        message:
          "failed to parse function arguments: invalid type: floating point `1.5`, expected struct ReadResourceArgs",
      },
    },
  ])("reads with $text", ({ text, result }) => {
    expect(read(text)).toEqual(result);
  });

  it("names the JSON problem for invalid arguments", () => {
    expect(list("{nope")).toEqual({
      ok: false,
      message: `failed to parse function arguments: ${jsonError("{nope")}`,
    });
  });
});

function jsonError(text: string): string {
  try {
    JSON.parse(text);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`${text} is valid JSON`);
}

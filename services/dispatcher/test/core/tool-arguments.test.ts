import { describe, expect, it } from "vitest";
import { MAX_ARGUMENT_DEPTH, parseToolArguments } from "../../src/core/tool-arguments.js";

function engineParseError(text: string): string {
  try {
    JSON.parse(text);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`expected ${text} not to parse`);
}

const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

describe("parseToolArguments", () => {
  it.each([
    { name: "empty text means no arguments", text: "", parsed: { kind: "none" } },
    { name: "whitespace-only text means no arguments", text: "  \n\t ", parsed: { kind: "none" } },
    {
      name: "an object is the arguments",
      text: ' {"path": "/tmp/a", "n": [1, 2]} ',
      parsed: { kind: "object", value: { path: "/tmp/a", n: [1, 2] } },
    },
    {
      name: "[26] an array is rejected with its compact JSON",
      text: "[1]",
      parsed: {
        kind: "not_object",
        value: [1],
        message: "MCP tool arguments must be a JSON object, got [1]",
      },
    },
    {
      name: "a spaced array is shown compactly",
      text: '[ 1, { "a" : true } ]',
      parsed: {
        kind: "not_object",
        value: [1, { a: true }],
        message: 'MCP tool arguments must be a JSON object, got [1,{"a":true}]',
      },
    },
    {
      name: "a string is rejected",
      text: '"hi"',
      parsed: {
        kind: "not_object",
        value: "hi",
        message: 'MCP tool arguments must be a JSON object, got "hi"',
      },
    },
    {
      name: "null is rejected",
      text: "null",
      parsed: {
        kind: "not_object",
        value: null,
        message: "MCP tool arguments must be a JSON object, got null",
      },
    },
    {
      name: "a number is rejected",
      text: "42",
      parsed: { kind: "not_object", value: 42, message: "MCP tool arguments must be a JSON object, got 42" },
    },
  ])("$name", ({ text, parsed }) => {
    expect(parseToolArguments(text)).toEqual(parsed);
  });

  it.each(["{", "{'a':1}", '{"a":1,}', "nope"])(
    "[25] answers invalid JSON %j with `err: <parse error>`",
    (text) => {
      expect(parseToolArguments(text)).toEqual({
        kind: "invalid_json",
        message: `err: ${engineParseError(text)}`,
        reason: engineParseError(text),
      });
    },
  );

  it("accepts nesting exactly at the depth limit", () => {
    expect(parseToolArguments(`{"a":${nested(MAX_ARGUMENT_DEPTH - 1)}}`)).toEqual({
      kind: "object",
      value: { a: JSON.parse(nested(MAX_ARGUMENT_DEPTH - 1)) },
    });
  });

  it("rejects nesting one level past the limit, naming where, without parsing", () => {
    const text = `{"a":${nested(MAX_ARGUMENT_DEPTH)}}`;
    expect(parseToolArguments(text)).toEqual({
      kind: "invalid_json",
      message: `err: arguments nest deeper than 512 levels at position ${5 + MAX_ARGUMENT_DEPTH - 1}; send flatter arguments`,
      reason: `arguments nest deeper than 512 levels at position ${5 + MAX_ARGUMENT_DEPTH - 1}; send flatter arguments`,
    });
  });

  it("does not count brackets inside strings, escaped quotes included", () => {
    const deepLooking = `x\\"${"[{".repeat(600)}`;
    expect(parseToolArguments(JSON.stringify({ text: deepLooking }))).toEqual({
      kind: "object",
      value: { text: deepLooking },
    });
  });

  // Without overflowing the stack; a parser that went quadratic would run past the test's timeout
  // (a clock check here would fail on a loaded machine instead).
  it("rejects a million open brackets", () => {
    expect(parseToolArguments("[".repeat(1_000_000)).kind).toBe("invalid_json");
  });
});

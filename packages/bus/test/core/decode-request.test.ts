import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { decodeRequest } from "../../src/core/decode-request.js";

const schema = z.object({ callId: z.string(), count: z.number().int().optional() });

describe("decodeRequest", () => {
  it.each([
    {
      name: "accepts a body the schema accepts, keeping its callId",
      text: '{"callId":"c1","count":2}',
      expected: { ok: true, value: { callId: "c1", count: 2 }, callId: "c1" },
    },
    {
      name: "drops fields the schema does not know",
      text: '{"callId":"c1","extra":true}',
      expected: { ok: true, value: { callId: "c1" }, callId: "c1" },
    },
    {
      name: "names the field whose type is wrong, and still reports the callId",
      text: '{"callId":"c1","count":"two"}',
      expected: {
        ok: false,
        message: "count: Invalid input: expected number, received string",
        callId: "c1",
      },
    },
    {
      name: "names a missing field",
      text: '{"count":1}',
      expected: { ok: false, message: "callId: Invalid input: expected string, received undefined" },
    },
    {
      name: "reads an empty body as an empty object",
      text: "  ",
      expected: { ok: false, message: "callId: Invalid input: expected string, received undefined" },
    },
    {
      name: "rejects text that is not JSON and says what to send",
      text: "{callId:",
      expected: {
        ok: false,
        // The parenthesis holds the JSON parser's own words, which vary with the Node version.
        message: expect.stringMatching(
          /^request body is not valid JSON \(.*position 1.*\); send one JSON object$/,
        ),
      },
    },
  ])("$name", ({ text, expected }) => {
    expect(decodeRequest(schema, text)).toEqual(expected);
  });

  it("never throws, whatever the body", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json()), (text) => {
        const decoded = decodeRequest(schema, text);
        expect(decoded.ok ? typeof decoded.value.callId : typeof decoded.message).toBe("string");
      }),
    );
  });

  it("gives back any JSON value a permissive schema accepts", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const decoded = decodeRequest(z.unknown(), JSON.stringify(value));
        expect(decoded).toMatchObject({ ok: true, value: JSON.parse(JSON.stringify(value)) });
      }),
    );
  });
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type Frame,
  LineFramer,
  OVERSIZED_MESSAGE_CODE,
  oversizedResponse,
  responseIdOf,
} from "../../src/core/message-size.js";

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (frame: Frame) => (frame.kind === "message" ? new TextDecoder().decode(frame.bytes) : frame);

/** Feeds `input` split at the given offsets. */
function frameAll(framer: LineFramer, input: string, cuts: number[]): Frame[] {
  const data = bytes(input);
  const points = [...new Set(cuts.map((c) => c % (data.length + 1)))].sort((a, b) => a - b);
  const frames: Frame[] = [];
  let start = 0;
  for (const point of [...points, data.length]) {
    frames.push(...framer.push(data.subarray(start, point)));
    start = point;
  }
  return frames;
}

describe("line framing", () => {
  it("yields every newline-terminated message whatever the chunking", () => {
    const message = fc
      .string({ unit: "grapheme", maxLength: 40 })
      .filter((m) => !m.includes("\n") && m !== "");
    fc.assert(
      fc.property(
        fc.array(message, { maxLength: 10 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        (messages, cuts) => {
          const input = messages.map((m) => `${m}\n`).join("");
          expect(frameAll(new LineFramer(1024), input, cuts).map(text)).toEqual(messages);
        },
      ),
    );
  });

  it.each([
    { name: "skips empty lines", input: "a\n\n\nb\n", frames: ["a", "b"] },
    { name: "holds a line until its newline arrives", input: "a\nbc", frames: ["a"] },
    { name: "takes a line of exactly the limit", input: "0123456789\n", frames: ["0123456789"] },
  ])("$name", ({ input, frames }) => {
    expect(new LineFramer(10).push(bytes(input)).map(text)).toEqual(frames);
  });

  it("drops a line over the limit, keeping its size and both ends, and goes on with the next", () => {
    const framer = new LineFramer(10);
    const long = `{"result":"${"x".repeat(1000)}","id":7}`;
    const frames = frameAll(framer, `${long}\nnext\n`, [5, 11, 300, 600]);
    expect(frames.map(text)).toEqual([
      {
        kind: "oversized",
        size: long.length,
        head: bytes(long.slice(0, 11)),
        tail: bytes(long.slice(-256)),
      },
      "next",
    ]);
  });
});

describe("the response an oversized message carried", () => {
  it.each([
    {
      name: "id last (TypeScript SDK)",
      head: '{"result":{"content":[',
      tail: 'xx"}]},"jsonrpc":"2.0","id":7}',
      id: 7,
    },
    {
      name: "an error with a string id",
      head: '{"error":{"code":1',
      tail: '"jsonrpc":"2.0","id":"r-1"}\r',
      id: "r-1",
    },
    { name: "id first", head: '{"jsonrpc": "2.0", "id": 12, "result": {"content"', tail: "}}", id: 12 },
    {
      name: "a request from the server",
      head: '{"method":"sampling/createMessage","params":',
      tail: '"id":3}',
      id: undefined,
    },
    { name: "a notification", head: '{"method":"notifications/message"', tail: "}}", id: undefined },
    {
      name: "a result whose end is not an id",
      head: '{"result":{"a":',
      tail: '"id":3},"x":1}',
      id: undefined,
    },
  ])("$name", ({ head, tail, id }) => {
    expect(responseIdOf(head, tail)).toBe(id);
  });

  it("is answered with an error naming the limit and the size, which it carries for the request's own words", () => {
    expect(oversizedResponse(7, 1_048_576, 50_000_073)).toEqual({
      jsonrpc: "2.0",
      id: 7,
      error: {
        code: OVERSIZED_MESSAGE_CODE,
        message:
          "the server's reply of 50000073 bytes is larger than 1048576 bytes, the most toolbus reads in one message from an MCP server (the larger of [bus] max_reply_bytes and NATS max_payload); ask for less, or raise [bus] max_reply_bytes",
        data: { limit: 1_048_576, size: 50_000_073 },
      },
    });
  });
});

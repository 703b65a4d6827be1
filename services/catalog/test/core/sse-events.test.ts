import { describe, expect, it } from "vitest";
import { SseDataRewriter } from "../../src/core/sse-events.js";

const upper = new SseDataRewriter((data) => (data.startsWith("x") ? data : data.toUpperCase()));

describe("SseDataRewriter", () => {
  it("rewrites each complete event's data, keeping its other fields, across any split of the text", () => {
    const rewriter = new SseDataRewriter((data) => data.toUpperCase());
    const stream =
      'id: 1\nevent: message\ndata: {"a":1}\n\n: comment\n\ndata: two\r\ndata: lines\r\n\r\nretry: 5\n\n';
    let out = "";
    for (const piece of stream.match(/[\s\S]{1,3}/g)!) out += rewriter.push(piece);
    out += rewriter.end();
    expect(out).toBe(
      'id: 1\nevent: message\ndata: {"A":1}\n\n: comment\n\ndata: TWO\ndata: LINES\n\nretry: 5\n\n',
    );
  });

  it("passes an event whose data is unchanged as it came, and holds an unfinished one until the end", () => {
    expect(upper.push("data: x1\n\ndata: ab")).toBe("data: x1\n\n");
    expect(upper.end()).toBe("data: ab");
  });
});

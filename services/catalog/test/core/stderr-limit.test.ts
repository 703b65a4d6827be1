import { describe, expect, it } from "vitest";
import { StderrLimiter } from "../../src/core/stderr-limit.js";

const bytes = (text: string) => new TextEncoder().encode(text);
const limits = { maxLineBytes: 8, maxLines: 3, windowMs: 1_000 };

describe("StderrLimiter", () => {
  it("gives whole lines, joined across chunks, and the last one at the end", () => {
    const limiter = new StderrLimiter(limits);
    expect([
      ...limiter.push(bytes("one\ntw"), 0),
      ...limiter.push(bytes("o\n\nthr"), 1),
      ...limiter.end(2),
    ]).toEqual([
      { kind: "line", text: "one" },
      { kind: "line", text: "two" },
      { kind: "line", text: "thr" },
    ]);
  });

  it("cuts a long line at the cap, saying how many bytes it dropped, however many chunks it spans", () => {
    const limiter = new StderrLimiter(limits);
    const out = [...limiter.push(bytes("abcdefghij"), 0), ...limiter.push(bytes("klmno\nok\n"), 0)];
    expect(out).toEqual([
      { kind: "line", text: "abcdefgh… [7 more bytes of this line dropped by toolbus]" },
      { kind: "line", text: "ok" },
    ]);
  });

  it("logs at most maxLines per window, notes when it starts dropping, and counts the dropped at the next window", () => {
    const limiter = new StderrLimiter(limits);
    const flood = limiter.push(bytes("1\n2\n3\n4\n5\n6\n"), 0);
    expect(flood).toEqual([
      { kind: "line", text: "1" },
      { kind: "line", text: "2" },
      { kind: "line", text: "3" },
      {
        kind: "dropped",
        text: "the MCP server wrote more than 3 stderr lines in 1 s; the rest of them are dropped, and counted",
      },
    ]);
    expect(limiter.push(bytes("7\n"), 999)).toEqual([]);
    expect(limiter.push(bytes("8\n"), 1_000)).toEqual([
      {
        kind: "dropped",
        text: "dropped 4 more stderr lines of the MCP server (at most 3 are logged per 1 s)",
      },
      { kind: "line", text: "8" },
    ]);
  });
});

import type { CallBeginEvent, CallToolResult } from "@toolbus/protocol";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EVENT_RESULT_MAX_BYTES } from "../../src/core/event-copy.js";
import { argumentsOmittedNote, fitBeginEvent, fitEndEvent } from "../../src/core/event-fit.js";
import { utf8Length } from "../../src/core/truncate.js";

const sizeOf = (value: unknown) => utf8Length(JSON.stringify(value));
const begin = (args: CallBeginEvent["invocation"]["arguments"]): CallBeginEvent => ({
  callId: "call-1",
  threadId: "thread-1",
  invocation: { server: "docs", tool: "search", arguments: args },
  at: "2026-12-01T10:00:00.000Z",
});
const text = (value: string): CallToolResult => ({ content: [{ type: "text", text: value }] });

describe("fitBeginEvent", () => {
  it("keeps an event that fits whole", () => {
    const event = begin({ q: "x".repeat(100) });
    expect(fitBeginEvent(event, 1_000)).toBe(event);
  });

  it("replaces arguments too large for the bus with a note of their size", () => {
    const args = { q: "x".repeat(2_000) };
    expect(fitBeginEvent(begin(args), 1_000)).toEqual(begin(argumentsOmittedNote(sizeOf(args))));
  });
});

describe("fitEndEvent", () => {
  const fields = (args: CallBeginEvent["invocation"]["arguments"]) => ({
    ...begin(args),
    status: "completed" as const,
    durationMs: 5,
  });

  it("keeps a small result whole", () => {
    expect(fitEndEvent(fields(null), text("hello"), 10_000)).toEqual({
      ...fields(null),
      result: { ok: text("hello") },
    });
  });

  it("caps the result copy at 1 MiB on a bus that carries more", () => {
    const event = fitEndEvent(fields(null), text("a".repeat(3 * EVENT_RESULT_MAX_BYTES)), 8 * 1024 * 1024);
    expect({
      copyWithinCap: "ok" in event.result && sizeOf(event.result.ok) <= EVENT_RESULT_MAX_BYTES,
      nearlyFull: sizeOf(event) > EVENT_RESULT_MAX_BYTES - 1024,
    }).toEqual({ copyWithinCap: true, nearlyFull: true });
  });

  it("shrinks the result copy to the room the arguments leave (on a 1 MiB bus)", () => {
    const args = { q: "q".repeat(600_000) };
    const maxEventBytes = 1024 * 1024 - 4096;
    const event = fitEndEvent(fields(args), text("r".repeat(700_000)), maxEventBytes);
    expect({
      arguments: event.invocation.arguments,
      fits: sizeOf(event) <= maxEventBytes,
      truncated: "ok" in event.result && /…\d+ chars truncated…/.test(JSON.stringify(event.result.ok)),
    }).toEqual({ arguments: args, fits: true, truncated: true });
  });

  it("drops the copy of arguments that leave no room for the result", () => {
    const args = { q: "q".repeat(5_000) };
    const event = fitEndEvent(fields(args), { error: "boom" }, 5_000);
    expect(event).toEqual({
      ...fields(argumentsOmittedNote(sizeOf(args))),
      result: { err: "boom" },
    });
  });

  it("always fits the bus, whatever the sizes of arguments and result", () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 40_000 }),
        fc.nat({ max: 40_000 }),
        fc.integer({ min: 8_000, max: 30_000 }),
        fc.boolean(),
        (argBytes, resultBytes, maxEventBytes, failed) => {
          const outcome = failed ? { error: "e".repeat(resultBytes) } : text("r\n".repeat(resultBytes / 2));
          const event = fitEndEvent(fields({ q: "q".repeat(argBytes) }), outcome, maxEventBytes);
          return sizeOf(event) <= maxEventBytes;
        },
      ),
    );
  });
});

import { describe, expect, it } from "vitest";
import { HistoryEntries, historySequences } from "../../src/core/history-entries.js";

const entries = (maxPending = 100) => new HistoryEntries({ delayMs: 500, maxPending });

describe("history entries: when the call-history index is written", () => {
  it("writes a call that ends within the delay once, as its end holding both sequences", () => {
    const index = entries();
    const atBegin = index.begun("t1", "c1", 10, 0);
    const atEnd = index.ended("t1", "c1", 11);
    expect({ atBegin, atEnd, later: index.due(10_000), next: index.nextDueAt }).toEqual({
      atBegin: undefined,
      atEnd: { threadId: "t1", callId: "c1", phase: "end", value: "10 11" },
      later: [],
      next: undefined,
    });
  });

  it("writes the begin of a call still running after the delay, then its end alone", () => {
    const index = entries();
    index.begun("t1", "slow", 10, 0);
    index.begun("t1", "slower", 12, 100);
    expect({
      before: index.due(499),
      next: index.nextDueAt,
      due: index.due(500),
      end: index.ended("t1", "slow", 20),
      stillWaiting: index.nextDueAt,
    }).toEqual({
      before: [],
      next: 500,
      due: [{ threadId: "t1", callId: "slow", phase: "begin", value: "10" }],
      end: { threadId: "t1", callId: "slow", phase: "end", value: "20" },
      stillWaiting: 600,
    });
  });

  it("writes an end whose begin is not stored yet on its own, and that begin later under its own key", () => {
    const index = entries();
    const end = index.ended("t1", "c1", 11);
    index.begun("t1", "c1", 10, 0);
    expect({ end, begin: index.due(500) }).toEqual({
      end: { threadId: "t1", callId: "c1", phase: "end", value: "11" },
      begin: [{ threadId: "t1", callId: "c1", phase: "begin", value: "10" }],
    });
  });

  it("keeps the calls of two threads with one callId apart", () => {
    const index = entries();
    index.begun("t1", "same", 10, 0);
    index.begun("t2", "same", 11, 0);
    expect({ end: index.ended("t2", "same", 12), due: index.due(500) }).toEqual({
      end: { threadId: "t2", callId: "same", phase: "end", value: "11 12" },
      due: [{ threadId: "t1", callId: "same", phase: "begin", value: "10" }],
    });
  });

  it("writes a begin at once when as many already wait as it may hold", () => {
    const index = entries(1);
    expect({
      first: index.begun("t1", "a", 1, 0),
      second: index.begun("t1", "b", 2, 0),
      stopping: index.due(Number.POSITIVE_INFINITY),
    }).toEqual({
      first: undefined,
      second: { threadId: "t1", callId: "b", phase: "begin", value: "2" },
      stopping: [{ threadId: "t1", callId: "a", phase: "begin", value: "1" }],
    });
  });

  it("reads the sequences of an entry, written now or by an earlier version (one sequence)", () => {
    expect(["12", "12 13", "", "x", "1 2 3", "-1", "1.5", "0"].map(historySequences)).toEqual([
      [12],
      [12, 13],
      [],
      [],
      [],
      [],
      [],
      [],
    ]);
  });
});

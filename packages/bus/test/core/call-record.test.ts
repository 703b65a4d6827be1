// What a call's record in the ledger means for a request that finds it.
import { describe, expect, it } from "vitest";
import { callKey } from "../../src/call-ledger.js";
import { findingOf, parseCallRecord } from "../../src/core/call-record.js";

describe("findingOf", () => {
  it("tells a request to run, refuse, answer or wait", () => {
    expect(findingOf(undefined, "a")).toEqual({ kind: "absent" });
    expect(findingOf({ state: "running", identity: "b", owner: "dispatcher.x" }, "a")).toEqual({
      kind: "reused",
    });
    expect(findingOf({ state: "done", identity: "b", owner: "dispatcher.x", outcome: 1 }, "a")).toEqual({
      kind: "reused",
    });
    expect(findingOf({ state: "running", identity: "a", owner: "dispatcher.x" }, "a")).toEqual({
      kind: "running",
      owner: "dispatcher.x",
    });
    expect(
      findingOf({ state: "done", identity: "a", owner: "dispatcher.x", outcome: { ok: 1 } }, "a"),
    ).toEqual({
      kind: "done",
      outcome: { ok: 1 },
    });
  });
});

describe("parseCallRecord", () => {
  it("reads the records the ledger writes, and nothing else", () => {
    expect(parseCallRecord('{"state":"running","identity":"a","owner":"o"}')).toEqual({
      state: "running",
      identity: "a",
      owner: "o",
    });
    expect(parseCallRecord('{"state":"done","identity":"a","owner":"o","outcome":null}')).toEqual({
      state: "done",
      identity: "a",
      owner: "o",
      outcome: null,
    });
    for (const foreign of [
      "not json",
      "null",
      "[]",
      '{"state":"done","identity":"a","owner":"o"}',
      '{"state":"x","identity":"a","owner":"o"}',
    ]) {
      expect(parseCallRecord(foreign)).toBeUndefined();
    }
  });
});

describe("callKey", () => {
  it("keeps a plain callId as it is and hashes any other, so no two callIds share a key", () => {
    expect(callKey("call-1_A")).toBe("call-1_A");
    const dotted = callKey("call.1");
    expect(dotted).toMatch(/^=[0-9a-f]{64}$/);
    expect(callKey("call 1")).not.toBe(dotted);
  });
});

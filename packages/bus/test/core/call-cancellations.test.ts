import { describe, expect, it } from "vitest";
import { CallCancellations, cancelReason } from "../../src/core/call-cancellations.js";

function registry(options: { rememberMs?: number; maxRemembered?: number } = {}) {
  let now = 1_000;
  const cancellations = new CallCancellations({
    now: () => now,
    rememberMs: options.rememberMs ?? 60_000,
    maxRemembered: options.maxRemembered ?? 100,
  });
  return { cancellations, advance: (ms: number) => (now += ms) };
}

describe("CallCancellations", () => {
  it("aborts a running call's signal with the cancellation's reason", () => {
    const { cancellations } = registry();
    const call = cancellations.track("call_1");
    const other = cancellations.track("call_2");
    const running = cancellations.cancel("call_1", "the MCP client sent notifications/cancelled");
    expect({
      running,
      aborted: call.signal.aborted,
      reason: cancelReason(call.signal),
      otherAborted: other.signal.aborted,
    }).toEqual({
      running: true,
      aborted: true,
      reason: "the MCP client sent notifications/cancelled",
      otherAborted: false,
    });
  });

  it("starts a call cancelled when its cancellation arrived first", () => {
    const { cancellations } = registry();
    const running = cancellations.cancel("call_1", "DELETE /v1/calls/call_1 by bob");
    const call = cancellations.track("call_1");
    expect({ running, aborted: call.signal.aborted, reason: cancelReason(call.signal) }).toEqual({
      running: false,
      aborted: true,
      reason: "DELETE /v1/calls/call_1 by bob",
    });
  });

  it("forgets an early cancellation after rememberMs", () => {
    const { cancellations, advance } = registry({ rememberMs: 5_000 });
    cancellations.cancel("call_1", "gone");
    advance(5_000);
    expect(cancellations.track("call_1").signal.aborted).toBe(false);
  });

  it("remembers at most maxRemembered cancellations, forgetting the oldest", () => {
    const { cancellations } = registry({ maxRemembered: 2 });
    for (const callId of ["a", "b", "c"]) cancellations.cancel(callId, `cancel ${callId}`);
    expect({
      size: cancellations.size,
      a: cancellations.track("a").signal.aborted,
      c: cancellations.track("c").signal.aborted,
    }).toEqual({ size: { running: 0, remembered: 2 }, a: false, c: true });
  });

  it("shares one signal between duplicates of a call and drops it once both are released", () => {
    const { cancellations } = registry();
    const first = cancellations.track("call_1");
    const second = cancellations.track("call_1");
    first.release();
    first.release();
    const whileOneHolds = cancellations.size.running;
    second.release();
    const afterBoth = cancellations.size.running;
    const running = cancellations.cancel("call_1", "late");
    expect({ same: first.signal === second.signal, whileOneHolds, afterBoth, running }).toEqual({
      same: true,
      whileOneHolds: 1,
      afterBoth: 0,
      running: false,
    });
  });
});

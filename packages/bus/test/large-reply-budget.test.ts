import { afterEach, describe, expect, it, vi } from "vitest";
import { LargeRepliesBudget, LargeRepliesBudgetError, LargeReplyHold } from "../src/large-reply-budget.js";

afterEach(() => {
  vi.useRealTimers();
});

describe("the budget for large replies in flight", () => {
  it("holds what fits at once, and lets the next in line in when bytes are given back, first come first served", async () => {
    const budget = new LargeRepliesBudget(100);
    const a = await budget.take(60);
    const granted: string[] = [];
    const b = budget.take(50).then((release) => {
      granted.push("b");
      return release;
    });
    // Smaller, and would fit now, but comes after b: it waits its turn.
    const c = budget.take(30).then((release) => {
      granted.push("c");
      return release;
    });
    await Promise.resolve();
    expect({ granted: [...granted], inFlight: budget.inFlight }).toEqual({ granted: [], inFlight: 60 });
    a();
    const releaseB = await b;
    const releaseC = await c;
    expect({ granted, inFlight: budget.inFlight }).toEqual({ granted: ["b", "c"], inFlight: 80 });
    releaseB();
    releaseB(); // a second release gives back nothing more
    releaseC();
    expect(budget.inFlight).toBe(0);
  });

  it("refuses at once what is larger than the whole budget, naming it and what to change", async () => {
    const budget = new LargeRepliesBudget(1024);
    await expect(budget.take(2048)).rejects.toEqual(
      new LargeRepliesBudgetError(
        "2048 bytes is larger than this process's budget for large replies in flight ([bus] large_replies_in_flight_bytes = 1024, 1 KiB); raise [bus] large_replies_in_flight_bytes, retry later, or ask for less",
      ),
    );
  });

  it("refuses what waited too long, and lets those behind it in", async () => {
    vi.useFakeTimers();
    const budget = new LargeRepliesBudget(100);
    const held = await budget.take(90);
    const big = budget.take(50, 1_000);
    const small = budget.take(10, 60_000);
    const refused = expect(big).rejects.toThrow(
      /^50 bytes did not fit in this process's budget .* within 1 s, other large replies holding it/,
    );
    await vi.advanceTimersByTimeAsync(1_000);
    await refused;
    // Behind the refused one, the small one fits beside what is held.
    (await small)();
    held();
    expect(budget.inFlight).toBe(0);
  });

  it("says when there is room again, for a reader that stopped reading meanwhile", async () => {
    const budget = new LargeRepliesBudget(100);
    const held = await budget.take(100);
    const told: string[] = [];
    void budget.whenRoom().then(() => told.push("room"));
    expect(budget.hasRoom).toBe(false);
    await Promise.resolve();
    expect(told).toEqual([]);
    held();
    await Promise.resolve();
    expect({ told, hasRoom: budget.hasRoom }).toEqual({ told: ["room"], hasRoom: true });
  });

  it("takes at once only what fits with nobody waiting; a reply taking a held one's place is never made to wait", async () => {
    const budget = new LargeRepliesBudget(100);
    const first = budget.tryTake(70);
    expect(budget.tryTake(40)).toBeUndefined();
    const forced = budget.force(40);
    expect(budget.inFlight).toBe(110);
    first?.();
    forced();
    expect(budget.inFlight).toBe(0);
  });

  it("is not lost to a read that comes after its request was answered", async () => {
    const budget = new LargeRepliesBudget(100);
    const hold = new LargeReplyHold();
    hold.add(40, await budget.take(40));
    hold.release();
    // Work the handler left running reads one more large reply afterwards.
    hold.add(30, await budget.take(30));
    await new Promise((resolve) => setImmediate(resolve));
    expect({ inFlight: budget.inFlight, held: hold.bytes }).toEqual({ inFlight: 0, held: 0 });
  });
});

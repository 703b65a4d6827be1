import { describe, expect, it } from "vitest";
import {
  DEFAULT_EVENT_DELIVERY,
  eventDuplicateWindowMs,
  overHoldBound,
  retryBudgetSpent,
  retryDelayMs,
} from "../../src/core/backoff.js";

const limits = { ...DEFAULT_EVENT_DELIVERY, firstDelayMs: 100, maxDelayMs: 500, retryBudgetMs: 1_000 };

describe("retryDelayMs", () => {
  it.each([
    { retry: 1, expected: 100 },
    { retry: 2, expected: 200 },
    { retry: 3, expected: 400 },
    { retry: 4, expected: 500 },
    { retry: 40, expected: 500 },
  ])("waits $expected ms before retry $retry", ({ retry, expected }) => {
    expect(retryDelayMs(limits, retry)).toBe(expected);
  });
});

describe("retryBudgetSpent", () => {
  it.each([
    { elapsed: 0, spent: false },
    { elapsed: 999, spent: false },
    { elapsed: 1_000, spent: true },
  ])("after $elapsed ms of a 1 s budget: spent = $spent", ({ elapsed, spent }) => {
    expect(retryBudgetSpent(limits, 5_000, 5_000 + elapsed)).toBe(spent);
  });

  it("outlasts a one-minute JetStream outage by default", () => {
    expect(retryBudgetSpent(DEFAULT_EVENT_DELIVERY, 0, 120_000)).toBe(false);
  });
});

describe("overHoldBound", () => {
  const bound = { maxHeld: 3, maxHeldBytes: 100 };
  it.each([
    { held: { count: 2, bytes: 50 }, bytes: 50, over: false },
    { held: { count: 3, bytes: 10 }, bytes: 1, over: true },
    { held: { count: 0, bytes: 0 }, bytes: 101, over: true },
    { held: { count: 1, bytes: 60 }, bytes: 41, over: true },
  ])(
    "holding $held.count events of $held.bytes bytes, one more of $bytes bytes is over: $over",
    ({ held, bytes, over }) => {
      expect(overHoldBound(bound, held, bytes)).toBe(over);
    },
  );
});

describe("eventDuplicateWindowMs", () => {
  it("covers the whole retry budget and the last attempt's ack wait", () => {
    expect(eventDuplicateWindowMs({ retryBudgetMs: 300_000 }, 5_000)).toBe(305_000);
  });
});

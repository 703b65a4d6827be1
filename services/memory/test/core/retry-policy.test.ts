import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY_POLICY, failedMessageAction, holdDelayMs } from "../../src/core/retry-policy.js";

const policy = {
  ...DEFAULT_RETRY_POLICY,
  maxDeliveries: 4,
  redeliveryFirstDelayMs: 1_000,
  redeliveryMaxDelayMs: 3_000,
};

describe("holdDelayMs", () => {
  it.each([
    { attempt: 1, delayMs: 100 },
    { attempt: 2, delayMs: 200 },
    { attempt: 6, delayMs: 3_200 },
    { attempt: 7, delayMs: 5_000 },
    { attempt: 10_000, delayMs: 5_000 },
  ])("waits $delayMs ms before retry $attempt of a held batch", ({ attempt, delayMs }) => {
    expect(holdDelayMs(DEFAULT_RETRY_POLICY, attempt)).toBe(delayMs);
  });
});

describe("failedMessageAction", () => {
  it.each([
    { deliveryCount: 1, action: { kind: "redeliver", delayMs: 1_000 } },
    { deliveryCount: 2, action: { kind: "redeliver", delayMs: 2_000 } },
    { deliveryCount: 3, action: { kind: "redeliver", delayMs: 3_000 } },
    { deliveryCount: 4, action: { kind: "park" } },
    { deliveryCount: 9, action: { kind: "park" } },
  ])("on delivery $deliveryCount of 4: $action.kind", ({ deliveryCount, action }) => {
    expect(failedMessageAction(policy, deliveryCount)).toEqual(action);
  });
});

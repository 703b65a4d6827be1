import { describe, expect, it } from "vitest";
import { retryDelayMs } from "../../src/core/backoff.js";

const policy = { retries: 4, firstDelayMs: 100, maxDelayMs: 500 };

describe("retryDelayMs", () => {
  it.each([
    { retry: 0, expected: undefined },
    { retry: 1, expected: 100 },
    { retry: 2, expected: 200 },
    { retry: 3, expected: 400 },
    { retry: 4, expected: 500 },
    { retry: 5, expected: undefined },
  ])("waits $expected ms before retry $retry, then gives up", ({ retry, expected }) => {
    expect(retryDelayMs(policy, retry)).toBe(expected);
  });

  it("never retries under a policy of zero retries", () => {
    expect(retryDelayMs({ ...policy, retries: 0 }, 1)).toBeUndefined();
  });
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { planBatch, usageIncrements } from "../../src/core/batch-plan.js";
import type { DecodedMessage } from "../../src/core/memory-message.js";
import { A, B, C } from "../citations.js";

const ok = (messageId: string, threadIds: string[] = []): DecodedMessage => ({
  ok: true,
  messageId,
  threadIds,
});
const poison = (error: string, messageId: string | null = null): DecodedMessage => ({
  ok: false,
  error,
  messageId,
});

describe("planBatch", () => {
  it("counts each messageId once, parks poison, and acknowledges repeats without counting them", () => {
    const plan = planBatch([
      ok("m1", [A]),
      poison("bad"),
      ok("m2", [B]),
      ok("m1", [A]),
      poison("worse", "m3"),
    ]);
    expect(plan).toEqual({
      count: [
        { messageId: "m1", threadIds: [A] },
        { messageId: "m2", threadIds: [B] },
      ],
      poison: [
        { index: 1, error: "bad", messageId: null },
        { index: 4, error: "worse", messageId: "m3" },
      ],
      repeats: [3],
    });
  });

  it("plans nothing for an empty batch", () => {
    expect(planBatch([])).toEqual({ count: [], poison: [], repeats: [] });
  });
});

describe("usageIncrements", () => {
  it("adds one per mention, summed over messages, sorted by thread id ([a, a, b] adds 2 to a)", () => {
    const increments = usageIncrements([
      { messageId: "m1", threadIds: [B, A, A] },
      { messageId: "m2", threadIds: [A, C] },
      { messageId: "m3", threadIds: [] },
    ]);
    expect(increments).toEqual([
      { threadId: A, count: 3 },
      { threadId: B, count: 1 },
      { threadId: C, count: 1 },
    ]);
  });

  it("never loses or invents a mention", () => {
    const ids = fc.constantFrom(A, B, C, "x", "y");
    const messages = fc.array(
      fc.record({ messageId: fc.string(), threadIds: fc.array(ids, { maxLength: 8 }) }),
      { maxLength: 20 },
    );
    fc.assert(
      fc.property(messages, (batch) => {
        const increments = usageIncrements(batch);
        const total = increments.reduce((sum, increment) => sum + increment.count, 0);
        const mentions = batch.reduce((sum, message) => sum + message.threadIds.length, 0);
        expect(total).toBe(mentions);
        expect(new Set(increments.map((increment) => increment.threadId)).size).toBe(increments.length);
      }),
    );
  });
});

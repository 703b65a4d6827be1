import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { mentionsOf, planBatch } from "../../src/core/batch-plan.js";
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

describe("mentionsOf", () => {
  it("[58] lists one pair per mention, repeats included ([a, a, b] mentions a twice)", () => {
    expect(
      mentionsOf([
        { messageId: "m1", threadIds: [B, A, A] },
        { messageId: "m2", threadIds: [A, C] },
        { messageId: "m3", threadIds: [] },
      ]),
    ).toEqual({ messageIds: ["m1", "m1", "m1", "m2", "m2"], threadIds: [B, A, A, A, C] });
  });

  it("never loses or invents a mention", () => {
    const ids = fc.constantFrom(A, B, C, "x", "y");
    const messages = fc.uniqueArray(
      fc.record({ messageId: fc.string(), threadIds: fc.array(ids, { maxLength: 8 }) }),
      { maxLength: 20, selector: (message) => message.messageId },
    );
    fc.assert(
      fc.property(messages, (batch) => {
        const { messageIds, threadIds } = mentionsOf(batch);
        const regrouped = batch.map((message) => ({
          messageId: message.messageId,
          threadIds: threadIds.filter((_, k) => messageIds[k] === message.messageId),
        }));
        expect({ pairs: messageIds.length, regrouped }).toEqual({
          pairs: threadIds.length,
          regrouped: batch,
        });
      }),
    );
  });
});

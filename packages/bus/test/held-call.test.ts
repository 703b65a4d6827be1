import { WireError } from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import { answerWithin, HOLD_GRACE_MS, heldCall } from "../src/held-call.js";

/** A clock the sends move: each send takes `took` ms of it. */
function clock() {
  let t = 0;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

const stillRunning = () => new WireError("timeout", "call c has no reply yet", { retryable: true });

describe("heldCall", () => {
  it("sends the same request again while the dispatcher holds it, and returns the reply that comes", async () => {
    const time = clock();
    const sends: Array<{ holdMs: number; timeoutMs: number }> = [];
    const reply = await heldCall(
      async (holdMs, timeoutMs) => {
        sends.push({ holdMs, timeoutMs });
        time.advance(holdMs);
        if (sends.length < 4) throw stillRunning();
        return "the tool's reply";
      },
      { timeoutMs: 600_000, what: "call c", holdMs: 20_000, now: time.now },
    );
    expect(reply).toBe("the tool's reply");
    // Each send waits at most its hold and the grace: no reply outlives NATS's reply window.
    expect(sends).toEqual(Array(4).fill({ holdMs: 20_000, timeoutMs: 20_000 + HOLD_GRACE_MS }));
  });

  it("passes a final timeout on at once: only a retryable one means 'no answer yet'", async () => {
    let sends = 0;
    const final = new WireError("timeout", "the client gave up", { retryable: false });
    await expect(
      heldCall(
        async () => {
          sends += 1;
          throw final;
        },
        { timeoutMs: 600_000, what: "the elicitation of tool call c" },
      ),
    ).rejects.toBe(final);
    expect(sends).toBe(1);
  });

  it("passes any other answer on at once: an error of the call is its answer", async () => {
    let sends = 0;
    const denied = new WireError("approval_denied", "denied");
    await expect(
      heldCall(
        async () => {
          sends += 1;
          throw denied;
        },
        { timeoutMs: 600_000, what: "call c" },
      ),
    ).rejects.toBe(denied);
    expect(sends).toBe(1);
  });

  it("ends at the caller's own timeout, the last send no longer than what is left", async () => {
    const time = clock();
    const timeouts: number[] = [];
    const failure = heldCall(
      async (holdMs, timeoutMs) => {
        timeouts.push(timeoutMs);
        time.advance(Math.min(holdMs, timeoutMs));
        throw stillRunning();
      },
      { timeoutMs: 50_000, what: "call c-42", holdMs: 20_000, now: time.now },
    );
    await expect(failure).rejects.toMatchObject({
      code: "timeout",
      message: "call c-42 has no reply after 50 s; it may still be running",
    });
    expect(timeouts).toEqual([30_000, 30_000, 10_000]);
  });
});

describe("answerWithin", () => {
  it("answers with the answer that comes within the hold", async () => {
    await expect(answerWithin(Promise.resolve("answered"), 1_000, "not yet")).resolves.toBe("answered");
  });

  it("answers a retryable timeout when the hold runs out, while the answer still comes", async () => {
    let answer!: (value: string) => void;
    const coming = new Promise<string>((resolve) => (answer = resolve));
    await expect(answerWithin(coming, 20, "call c has no reply yet")).rejects.toMatchObject({
      code: "timeout",
      retryable: true,
      message: "call c has no reply yet",
    });
    answer("late");
    // The next send joins the same answer.
    await expect(answerWithin(coming, 20, "call c has no reply yet")).resolves.toBe("late");
  });

  it("waits for the answer however long without a hold", async () => {
    const slow = new Promise<string>((resolve) => setTimeout(() => resolve("slow"), 30));
    await expect(answerWithin(slow, undefined, "never said")).resolves.toBe("slow");
  });
});

/**
 * The event publisher against a scripted JetStream (the transport seam, `StoreInStream`): the
 * order retries take, the bounds, and that publishing flows again after every outage.
 */

import { describe, expect, it } from "vitest";
import { EventPublisher, type StoreInStream } from "../src/events.js";
import { createLogger } from "../src/logger.js";

const quiet = createLogger({ service: "events-test", version: "1.0.0", level: "silent" });
const FAST = { firstDelayMs: 1, maxDelayMs: 5, retryBudgetMs: 5_000 };

/** A store that answers each call with the next scripted outcome (`ok` after the script ends). */
function scriptedStore(script: Array<"ok" | "fail">) {
  const stored: string[] = [];
  let calls = 0;
  const store: StoreInStream = (_subject, payload) => {
    const outcome = script[calls++] ?? "ok";
    if (outcome === "fail") return Promise.reject(new Error("JetStream refused the event: no responders"));
    stored.push((JSON.parse(payload) as { e: string }).e);
    return Promise.resolve(stored.length);
  };
  return { store, stored, calls: () => calls };
}

/** `flush()`, or a failure naming what is still held after `ms`. */
async function flushed(events: EventPublisher, ms = 2_000): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`still holding ${events.pendingCount} event(s)`), ms);
  });
  try {
    return await Promise.race([events.flush().then(() => "flushed"), late]);
  } finally {
    clearTimeout(timer);
  }
}

describe("EventPublisher", () => {
  it("sends events directly again after a failure that came while its retries were ending", async () => {
    // A fails; its retry succeeds, B (queued behind it) fails on resend, its retry succeeds; D is new.
    const { store, stored } = scriptedStore(["fail", "ok", "fail", "ok", "ok"]);
    const events = new EventPublisher(store, quiet, { limits: FAST });
    events.publish("s", { e: "A" });
    await new Promise((resolve) => setTimeout(resolve, 0));
    // Published while A waits, so sent only after A's probe; its send fails as the retries end.
    events.publish("s", { e: "B" });
    expect(await flushed(events)).toBe("flushed");
    events.publish("s", { e: "D" });
    expect({ outcome: await flushed(events), stored }).toEqual({
      outcome: "flushed",
      stored: ["A", "B", "D"],
    });
  });

  it("probes with one event while others wait, then sends the waiting ones in publish order", async () => {
    const { store, stored, calls } = scriptedStore(["fail", "fail", "fail", "fail"]);
    const events = new EventPublisher(store, quiet, { limits: FAST });
    events.publish("s", { e: "A" });
    // Published while A waits: queued behind it, not sent.
    await new Promise((resolve) => setTimeout(resolve, 0));
    for (const e of ["B", "C"]) events.publish("s", { e });
    expect(await flushed(events)).toBe("flushed");
    // A's first send and three failed probes, then A, B and C once each.
    expect({ stored, calls: calls() }).toEqual({ stored: ["A", "B", "C"], calls: 7 });
  });

  it("gives up on an event after its retry budget, and the events after it flow again", async () => {
    let now = 0;
    let down = true;
    const stored: string[] = [];
    const store: StoreInStream = (_subject, payload) => {
      if (down) return Promise.reject(new Error("JetStream refused the event: no responders"));
      stored.push((JSON.parse(payload) as { e: string }).e);
      return Promise.resolve(stored.length);
    };
    const events = new EventPublisher(store, quiet, {
      limits: { ...FAST, retryBudgetMs: 100 },
      now: () => now,
    });
    events.publish("s", { e: "A" });
    await new Promise((resolve) => setTimeout(resolve, 20));
    now = 100;
    expect(await flushed(events)).toBe("flushed");
    down = false;
    events.publish("s", { e: "B" });
    expect({ outcome: await flushed(events), stored }).toEqual({ outcome: "flushed", stored: ["B"] });
  });
});

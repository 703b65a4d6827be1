import { afterEach, describe, expect, it } from "vitest";
import type { Bus } from "../src/bus.js";
import { EventPublisher, storeInStream } from "../src/events.js";
import { ReplyInbox } from "../src/reply-inbox.js";
import { LEVEL, sleep, startBus, uniqueName } from "./support.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.allSettled(cleanups.splice(0).map((cleanup) => cleanup()));
});

/** A stream for this test only, deleted afterwards. */
function scratchStream(bus: Bus) {
  const name = uniqueName("S");
  const prefix = uniqueName();
  cleanups.push(async () => (await bus.jsm()).streams.delete(name));
  return { name, prefix };
}

describe("publishEvent", () => {
  it("stores every event in the stream once flushEvents resolves", async () => {
    const { bus } = await startBus();
    const { name, prefix } = scratchStream(bus);
    const jsm = await bus.jsm();
    await jsm.streams.add({ name, subjects: [`${prefix}.events.>`] });
    for (let i = 0; i < 25; i++) bus.publishEvent(`${prefix}.events.call`, { i });
    await bus.flushEvents();
    const info = await jsm.streams.info(name);
    expect(info.state.messages).toBe(25);
    const first = await jsm.streams.getMessage(name, { seq: 1 });
    expect(first?.json()).toEqual({ i: 0 });
  });

  it("stores an event published twice with the same msgID once", async () => {
    const { bus } = await startBus();
    const { name, prefix } = scratchStream(bus);
    const jsm = await bus.jsm();
    await jsm.streams.add({ name, subjects: [`${prefix}.>`] });
    bus.publishEvent(`${prefix}.end`, { callId: "c1" }, { msgID: "end-c1" });
    bus.publishEvent(`${prefix}.end`, { callId: "c1" }, { msgID: "end-c1" });
    await bus.flushEvents();
    expect((await jsm.streams.info(name)).state.messages).toBe(1);
  });

  it("holds events no stream takes and stores each once, in order, when the stream appears", async () => {
    const { bus } = await startBus();
    const { name, prefix } = scratchStream(bus);
    for (let i = 0; i < 20; i++) bus.publishEvent(`${prefix}.events.call`, { i }, { msgID: `m${i}` });
    // Nothing captures the subject yet (as while a stream's leader is elected): JetStream answers
    // "no responders" at once, and the events wait longer than a few quick retries would last.
    await sleep(1_500);
    expect(bus.pendingEvents).toBe(20);
    const jsm = await bus.jsm();
    await jsm.streams.add({ name, subjects: [`${prefix}.events.>`] });
    await bus.flushEvents();
    const stored = [];
    for (let seq = 1; seq <= (await jsm.streams.info(name)).state.messages; seq++) {
      stored.push((await jsm.streams.getMessage(name, { seq }))?.json<{ i: number }>().i);
    }
    expect(stored).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it("retries an event no stream stores until its retry budget is spent, then logs the loss once", async () => {
    const { bus, lines } = await startBus();
    const subject = `${uniqueName()}.nowhere`;
    const events = new EventPublisher(storeInStream(new ReplyInbox(bus.nc)), bus.logger, {
      limits: { retryBudgetMs: 300, firstDelayMs: 10, maxDelayMs: 50 },
    });
    events.publish(subject, { lost: 1 }, { msgID: "m1" });
    events.publish(subject, { lost: 2 }, { msgID: "m2" });
    expect(events.pendingCount).toBe(2);
    await events.flush();
    expect(events.pendingCount).toBe(0);
    expect(lines.filter((line) => line.subject === subject).map((line) => [line.level, line.msg])).toEqual([
      [
        LEVEL.warn,
        `JetStream did not acknowledge an event on ${subject}; holding events and retrying for up to 300 ms (check that JetStream is up and a stream captures ${subject})`,
      ],
      [
        LEVEL.error,
        `event on ${subject} was not acknowledged by JetStream within 300 ms of retries and is lost; further losses are counted in toolbus.bus.events.lost and logged when JetStream stores events again`,
      ],
    ]);
  });

  it("drops an event published while the most it holds wait, and logs that once", async () => {
    const { bus, lines } = await startBus();
    const subject = `${uniqueName()}.nowhere`;
    const events = new EventPublisher(storeInStream(new ReplyInbox(bus.nc)), bus.logger, {
      limits: { retryBudgetMs: 200, firstDelayMs: 10, maxDelayMs: 50, maxHeld: 2 },
    });
    for (let i = 0; i < 4; i++) events.publish(subject, { i }, { msgID: `m${i}` });
    expect(events.pendingCount).toBe(2);
    const overflow = lines.filter((line) => line.reason === "overflow");
    expect(overflow.map((line) => [line.level, line.msgID])).toEqual([[LEVEL.error, "m2"]]);
    await events.flush();
  });
});

/**
 * The bus's connection batches the writes of one event-loop turn: messages sent from separate
 * callbacks of one turn still arrive in the order they were sent, and what was sent just before
 * the bus closes still arrives.
 */
import { connect } from "@nats-io/transport-node";
import { provided } from "@toolbus/testkit/provided";
import { afterEach, describe, expect, it } from "vitest";
import { startBus, uniqueName } from "./support.js";

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.allSettled(closers.splice(0).map((close) => close()));
});

/** A plain connection collecting what arrives on `subject`; `all` resolves at the `until`th message. */
async function listen(subject: string, until: number): Promise<{ all: Promise<string[]> }> {
  const nc = await connect({ servers: provided().natsUrl });
  closers.push(() => nc.close());
  const received: string[] = [];
  const all = new Promise<string[]>((resolve) => {
    nc.subscribe(subject, {
      callback: (_error, msg) => {
        received.push(msg.string());
        if (received.length === until) resolve(received);
      },
    });
  });
  await nc.flush();
  return { all };
}

describe("the bus connection", () => {
  it("delivers messages sent from timers, immediates and microtasks of one turn in the order sent", async () => {
    const { bus } = await startBus();
    const subject = uniqueName();
    const arrived = await listen(subject, 300);
    const sent: string[] = [];
    const send = (label: string) => {
      sent.push(JSON.stringify(label));
      bus.publish(subject, label);
    };
    await new Promise<void>((resolve) => {
      let pending = 100;
      const done = () => {
        pending -= 1;
        if (pending === 0) resolve();
      };
      for (let i = 0; i < 100; i++) {
        setTimeout(() => {
          send(`timer ${i}`);
          queueMicrotask(() => send(`microtask ${i}`));
          setImmediate(() => {
            send(`immediate ${i}`);
            done();
          });
        }, 0);
      }
    });
    expect(await arrived.all).toEqual(sent);
  });

  it("delivers what was published just before the bus closed", async () => {
    const { bus } = await startBus();
    const subject = uniqueName();
    const arrived = await listen(subject, 2);
    bus.publish(subject, { last: 1 });
    bus.publish(subject, { last: 2 });
    await bus.close();
    expect((await arrived.all).map((text) => JSON.parse(text))).toEqual([{ last: 1 }, { last: 2 }]);
  });
});

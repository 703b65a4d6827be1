// Events survive a NATS server that goes away and comes back: the publisher holds what was not
// acknowledged, retries it under the same msgID, and the stream stores each event exactly once.
// The test runs its own nats-server, which it stops and starts again.
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { createSubjects } from "@toolbus/protocol";
import { provisionPrefix, startThrowawayNats, type ThrowawayNats } from "@toolbus/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { connectBus } from "../src/bus.js";
import { createLogger } from "../src/logger.js";
import { EVENT_DUPLICATE_WINDOW_MS } from "../src/provision.js";
import { LEVEL, type LogLine, sleep } from "./support.js";

let nats: ThrowawayNats | undefined;
afterEach(async () => {
  await nats?.destroy();
  nats = undefined;
});

describe("events across a NATS outage", () => {
  it("stores every event exactly once after the server was down for seconds", async () => {
    nats = await startThrowawayNats();
    const lines: LogLine[] = [];
    const logger = createLogger({
      service: "durability",
      version: "1.0.0",
      level: "debug",
      destination: { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) },
    });
    const bus = await connectBus({
      natsUrl: nats.url,
      service: { name: "durability", version: "1.0.0" },
      logger,
    });
    // The events stream as the provisioner makes it: its duplicate window spans every retry.
    await provisionPrefix(nats.url, "t", { events: { maxAgeMs: 3_600_000, maxBytes: 64 * 1024 * 1024 } });
    const names = createSubjects("t").streams.events;
    const info = await (await bus.jsm()).streams.info(names.name);
    expect(info.config.duplicate_window).toBe(EVENT_DUPLICATE_WINDOW_MS * 1_000_000);

    const publish = (i: number) => bus.publishEvent("t.events.call", { i }, { msgID: `call-${i}` });
    for (let i = 0; i < 30; i++) publish(i);
    await bus.flushEvents();
    await nats.stop();
    // Published while the server is gone: held, not lost.
    for (let i = 30; i < 60; i++) {
      publish(i);
      if (i % 10 === 0) await sleep(300);
    }
    // Longer than an ack may take (5 s), so the held events are retried, not just flushed late.
    await sleep(6_000);
    expect(bus.pendingEvents).toBe(30);
    await nats.start();
    for (let i = 60; i < 70; i++) publish(i);
    await bus.flushEvents();

    const nc = await connect({ servers: nats.url });
    try {
      const reader = await jetstreamManager(nc);
      const stored: number[] = [];
      const count = (await reader.streams.info(names.name)).state.messages;
      for (let seq = 1; seq <= count; seq++) {
        stored.push((await reader.streams.getMessage(names.name, { seq }))!.json<{ i: number }>().i);
      }
      // Exactly once each. Order holds for what was published before the outage; an event written
      // into the broken connection before it was noticed may be stored after later ones.
      expect({
        count: stored.length,
        each: [...stored].sort((a, b) => a - b),
        before: stored.slice(0, 30),
      }).toEqual({
        count: 70,
        each: Array.from({ length: 70 }, (_, i) => i),
        before: Array.from({ length: 30 }, (_, i) => i),
      });
    } finally {
      await nc.close();
    }
    // The outage was noticed and outlasted, and nothing was given up on.
    expect({
      noticed: lines.some((line) => line.msg.startsWith("JetStream did not acknowledge an event")),
      recovered: lines.some((line) => line.msg === "JetStream stores events again"),
      errors: lines.filter((line) => line.level >= LEVEL.error && /event/.test(line.msg)),
    }).toEqual({ noticed: true, recovered: true, errors: [] });
    await bus.close();
  });
});

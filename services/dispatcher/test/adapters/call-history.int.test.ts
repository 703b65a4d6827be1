/**
 * A thread's history read back from the events stream by its index (call-history.ts): the
 * dispatcher may read only call events, through consumers filtered to them, so a thread whose
 * calls lie far apart in the stream is read by starting a consumer anew at each stretch. Real
 * JetStream, a provisioned prefix, events published and indexed as the dispatcher does.
 */
import { type JetStreamClient, jetstream } from "@nats-io/jetstream";
import { type Bus, connectBus, createLogger } from "@toolbus/bus";
import { type CallBeginEvent, type CallEndEvent, createSubjects, type Subjects } from "@toolbus/protocol";
import { cleanupJetStream, eventually, isolation, provisionPrefix } from "@toolbus/testkit";
import { provided } from "@toolbus/testkit/provided";
import { afterEach, describe, expect, it } from "vitest";
import {
  type CallHistoryIndex,
  openCallHistoryIndex,
  replayThreadItems,
} from "../../src/adapters/nats/call-history.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

interface Setup {
  bus: Bus;
  js: JetStreamClient;
  subjects: Subjects;
  index: CallHistoryIndex;
}

async function setUp(): Promise<Setup> {
  const { natsUrl } = provided();
  const { prefix } = isolation("history");
  cleanups.push(() => cleanupJetStream(natsUrl, prefix));
  await provisionPrefix(natsUrl, prefix);
  const logger = createLogger({ service: "dispatcher", version: "test", level: "silent" });
  const bus = await connectBus({ natsUrl, service: { name: "dispatcher", version: "0.1.0" }, logger });
  cleanups.push(() => bus.close());
  const subjects = createSubjects(prefix);
  const index = await openCallHistoryIndex({ bus, subjects, logger });
  cleanups.push(async () => index.stop());
  return { bus, js: jetstream(bus.nc), subjects, index };
}

const at = "2026-01-01T00:00:00.000Z";

/** Stores one call's begin and end and indexes them by thread, as the dispatcher does on each ack. */
async function storeCall(s: Setup, threadId: string, callId: string, text: string): Promise<void> {
  const begin: CallBeginEvent = {
    callId,
    threadId,
    invocation: { server: "scripted", tool: "echo", arguments: { text } },
    at,
  };
  const end: CallEndEvent = {
    ...begin,
    status: "completed",
    durationMs: 5,
    result: { ok: { content: [{ type: "text", text }] } },
  };
  const first = await s.js.publish(s.subjects.callBegin, JSON.stringify(begin));
  s.index.record(threadId, callId, "begin", first.seq);
  const second = await s.js.publish(s.subjects.callEnd, JSON.stringify(end));
  s.index.record(threadId, callId, "end", second.seq);
}

const item = (callId: string, text: string) => ({
  id: callId,
  server: "scripted",
  tool: "echo",
  arguments: { text },
  status: "completed",
  result: { content: [{ type: "text", text }] },
  durationMs: 5,
});

describe("a thread's history", () => {
  it("reads calls more than 256 call events apart, with other events between, in the order they began", async () => {
    const s = await setUp();
    await storeCall(s, "thread-a", "a-1", "first");
    // 300 call events of another thread, and events that are not call events, between them.
    for (let i = 0; i < 150; i++) {
      await storeCall(s, "thread-b", `b-${i}`, `other ${i}`);
      if (i % 50 === 0)
        await s.js.publish(s.subjects.catalogEvent, JSON.stringify({ revision: i, changed: [] }));
    }
    await storeCall(s, "thread-a", "a-2", "second");
    await storeCall(s, "thread-a", "a-3", "third");

    const expected = [item("a-1", "first"), item("a-2", "second"), item("a-3", "third")];
    // The index is written in the background, as the acks come.
    const items = await eventually("thread-a's three calls indexed", async () => {
      const read = await replayThreadItems({ bus: s.bus, subjects: s.subjects, threadId: "thread-a" });
      return read.length === 3 ? read : undefined;
    });
    expect(items).toEqual(expected);
    // And the other thread's calls, read from the same stream, are all there too.
    const other = await eventually("thread-b's calls indexed", async () => {
      const read = await replayThreadItems({ bus: s.bus, subjects: s.subjects, threadId: "thread-b" });
      return read.length === 150 ? read : undefined;
    });
    expect(other.map((call) => call.id)).toEqual(Array.from({ length: 150 }, (_, i) => `b-${i}`));
  });

  it("is empty for a thread with no calls, and for one whose events the stream no longer holds", async () => {
    const s = await setUp();
    expect(await replayThreadItems({ bus: s.bus, subjects: s.subjects, threadId: "nobody" })).toEqual([]);
    // An index entry pointing past the end of the stream reads nothing rather than hanging.
    s.index.record("thread-gone", "g-1", "end", 10_000);
    s.index.stop();
    const kv = await s.bus.kv(s.subjects.kv.callHistory);
    await eventually("the stale entry written", async () => {
      const keys: string[] = [];
      for await (const key of await kv.keys("thread-gone.>")) keys.push(key);
      return keys.length === 1 ? true : undefined;
    });
    expect(await replayThreadItems({ bus: s.bus, subjects: s.subjects, threadId: "thread-gone" })).toEqual(
      [],
    );
  });
});

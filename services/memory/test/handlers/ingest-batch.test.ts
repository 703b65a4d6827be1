import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY_POLICY } from "../../src/core/retry-policy.js";
import { type Delivery, decodePayload, ingestBatch } from "../../src/handlers/ingest-batch.js";
import { A, answer, B } from "../citations.js";
import { permanent, ScriptedStore, transient } from "./fake-store.js";

const NOW = 1_760_000_000;
const policy = { ...DEFAULT_RETRY_POLICY, maxDeliveries: 3, redeliveryFirstDelayMs: 100 };
const encoder = new TextEncoder();

function delivery(streamSequence: number, body: unknown, deliveryCount = 1): Delivery {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  const payload = encoder.encode(text);
  return {
    streamSequence,
    subject: "t.memory.message",
    deliveryCount,
    payload,
    message: decodePayload(payload),
  };
}

const ports = (store: ScriptedStore) => ({
  store,
  policy,
  now: () => NOW,
  logger: pino({ level: "silent" }),
});

describe("ingestBatch", () => {
  it("writes a whole batch in one transaction and acknowledges every message", async () => {
    const store = new ScriptedStore();
    store.counted.add("seen-before");
    const outcome = await ingestBatch(
      [
        delivery(1, { messageId: "m1", text: answer([A, A]) }),
        delivery(2, "not json"),
        delivery(3, { messageId: "m1", text: answer([A, A]) }),
        delivery(4, { messageId: "seen-before", text: answer([B]) }),
        delivery(5, { messageId: "m2", text: "no citation" }),
      ],
      ports(store),
    );
    expect(outcome).toEqual({
      kind: "settled",
      settlements: Array(5).fill({ kind: "ack" }),
      tally: { counted: 2, duplicates: 2, parked: 1, citations: 1 },
    });
    expect(store.writes).toEqual([
      {
        count: [
          { messageId: "m1", threadIds: [A] },
          { messageId: "seen-before", threadIds: [B] },
          { messageId: "m2", threadIds: [] },
        ],
        park: [
          {
            streamSequence: 2,
            subject: "t.memory.message",
            messageId: null,
            error: expect.stringMatching(/^the message is not valid JSON/),
            deliveries: 1,
            payload: encoder.encode("not json"),
          },
        ],
        now: NOW,
      },
    ]);
  });

  it("holds the whole batch, settling nothing, while the database is unreachable", async () => {
    const failure = transient();
    const store = new ScriptedStore(() => failure);
    const outcome = await ingestBatch([delivery(1, { messageId: "m1", text: answer([A]) })], ports(store));
    expect(outcome).toEqual({ kind: "unavailable", error: failure });
  });

  it("isolates a message the database rejects: the others are counted, it is redelivered with a delay", async () => {
    const store = new ScriptedStore((write) =>
      write.count.some((message) => message.messageId.includes("\u0000")) ? permanent() : undefined,
    );
    const outcome = await ingestBatch(
      [
        delivery(1, { messageId: "good", text: answer([A]) }),
        delivery(2, { messageId: "bad\u0000id", text: answer([B]) }, 2),
        delivery(3, { messageId: "also-good", text: answer([B]) }),
      ],
      ports(store),
    );
    expect(outcome).toEqual({
      kind: "settled",
      settlements: [{ kind: "ack" }, { kind: "redeliver", delayMs: 200 }, { kind: "ack" }],
      tally: { counted: 2, duplicates: 0, parked: 0, citations: 2 },
    });
    expect([...store.counted]).toEqual(["good", "also-good"]);
  });

  it("parks a message that failed on its last allowed delivery, with the reason", async () => {
    const store = new ScriptedStore((write) => (write.count.length > 0 ? permanent() : undefined));
    const outcome = await ingestBatch(
      [delivery(7, { messageId: "bad\u0000id", text: "x" }, 3)],
      ports(store),
    );
    expect(outcome).toEqual({
      kind: "settled",
      settlements: [{ kind: "ack" }],
      tally: { counted: 0, duplicates: 0, parked: 1, citations: 0 },
    });
    expect(store.writes.map((write) => write.park)).toEqual([
      [
        {
          streamSequence: 7,
          subject: "t.memory.message",
          messageId: "bad\uFFFDid",
          error:
            'failed on each of 3 deliveries; last error: invalid byte sequence for encoding "UTF8": 0x00 (SQLSTATE 22021)',
          deliveries: 3,
          payload: encoder.encode(JSON.stringify({ messageId: "bad\u0000id", text: "x" })),
        },
      ],
    ]);
  });

  it("holds the batch when the database goes away while messages are retried one by one", async () => {
    let calls = 0;
    const store = new ScriptedStore(() => {
      calls += 1;
      return calls === 1 ? permanent() : transient();
    });
    const outcome = await ingestBatch([delivery(1, { messageId: "m1", text: "x" })], ports(store));
    expect(outcome).toEqual({ kind: "unavailable", error: transient() });
  });
});

/**
 * A tool result larger than NATS max_payload (issue 16, item 4), on a nats-server of this file's
 * own with a 64 KiB max_payload: the connector's reply and the dispatcher's reply each travel
 * through the large-replies stream, so the caller gets the whole raw result, with the model
 * projection and the capped end event exactly as for a small one. A caller that does not know
 * the stream gets a clear payload_too_large naming where the reply is.
 */
import { Writable } from "node:stream";
import { jetstreamManager } from "@nats-io/jetstream";
import { nanos } from "@nats-io/transport-node";
import {
  type Bus,
  connectBus,
  createLogger,
  DEFAULT_EVENT_DELIVERY,
  EVENT_DUPLICATE_WINDOW_MS,
  LARGE_REPLY_HEADER,
  parseStoredReply,
} from "@toolbus/bus";
import { type CallEndEvent, ToolCallReplySchema } from "@toolbus/protocol";
import { startThrowawayNats, type ThrowawayNats } from "@toolbus/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DispatchHarness, wallTimeHeader } from "./support/harness.js";

const MAX_PAYLOAD = 64 * 1024;
const BLOB = "y".repeat(300_000);

let nats: ThrowawayNats;
let h: DispatchHarness;
let client: Bus;

beforeAll(async () => {
  nats = await startThrowawayNats({ maxPayload: MAX_PAYLOAD });
  h = await DispatchHarness.start({
    label: "large_results",
    natsUrl: nats.url,
    tables: [
      "[bus]",
      "events_max_age_sec = 86400",
      "events_max_bytes = 104857600",
      "large_reply_ttl_sec = 120",
      "large_replies_max_bytes = 52428800",
    ].join("\n"),
    script: {
      tools: [{ name: "echo" }, { name: "big", behavior: { kind: "structured", value: { blob: BLOB } } }],
    },
  });
  client = await connectBus({
    natsUrl: nats.url,
    service: { name: "large-results-client", version: "0.1.0" },
    logger: createLogger({
      service: "client",
      version: "test",
      level: "silent",
      destination: new Writable({ write: (_chunk, _encoding, done) => done() }),
    }),
  });
});
afterAll(async () => {
  await client?.close();
  await h?.close();
  await nats?.destroy();
});

describe("the [bus] limits", () => {
  it("bound the events stream and the large-replies stream the provisioner makes, whose duplicate window covers the event retry budget", async () => {
    const jsm = await jetstreamManager(h.nc);
    const events = (await jsm.streams.info(h.subjects.streams.events.name)).config;
    const replies = (await jsm.streams.info(h.subjects.streams.large.name)).config;
    expect({
      events: { maxAge: events.max_age, maxBytes: events.max_bytes, window: events.duplicate_window },
      replies: {
        maxAge: replies.max_age,
        maxBytes: replies.max_bytes,
        discard: replies.discard,
        denyDelete: replies.deny_delete,
        denyPurge: replies.deny_purge,
      },
    }).toEqual({
      events: { maxAge: nanos(86_400_000), maxBytes: 104_857_600, window: nanos(EVENT_DUPLICATE_WINDOW_MS) },
      replies: {
        maxAge: nanos(120_000),
        maxBytes: 52_428_800,
        discard: "new",
        denyDelete: true,
        denyPurge: true,
      },
    });
    expect(EVENT_DUPLICATE_WINDOW_MS).toBeGreaterThanOrEqual(DEFAULT_EVENT_DELIVERY.retryBudgetMs);
  });
});

describe("a result larger than max_payload", () => {
  it("reaches the dispatcher's caller whole, with the usual model projection and capped end event", async () => {
    const callId = h.callId();
    const reply = await client.request(
      h.subjects.dispatchCall,
      { callId, tool: "mcp__scripted__big", arguments: "" },
      ToolCallReplySchema,
      { timeoutMs: 20_000 },
    );
    const end = (await h.endedEvents(callId)).find((event) => event.phase === "end")!.body as CallEndEvent;
    const model = `${wallTimeHeader(reply.wallTimeMs)}\n${JSON.stringify({ blob: BLOB })}`;
    expect({
      replyOverMaxPayload: Buffer.byteLength(JSON.stringify(reply)) > MAX_PAYLOAD,
      status: reply.status,
      rawResult: reply.result,
      modelOutput: reply.output,
      endEventFits: Buffer.byteLength(JSON.stringify(end)) < MAX_PAYLOAD,
      endStatus: end.status,
    }).toEqual({
      replyOverMaxPayload: true,
      status: "completed",
      rawResult: {
        content: [{ type: "text", text: JSON.stringify({ blob: BLOB }) }],
        structuredContent: { blob: BLOB },
      },
      // The model reads only structuredContent, middle-truncated to 10,000 × 1.2 bytes, as ever.
      modelOutput: {
        success: true,
        body: `${model.slice(0, 6_000)}…${model.length - 12_000} chars truncated…${model.slice(-6_000)}`,
      },
      endEventFits: true,
      endStatus: "completed",
    });
  });

  it("answers a caller that does not read the stream with payload_too_large naming where the reply is", async () => {
    const callId = h.callId();
    const message = await h.nc.request(
      h.subjects.dispatchCall,
      JSON.stringify({ callId, tool: "mcp__scripted__big", arguments: "" }),
      { timeout: 20_000 },
    );
    const stored = parseStoredReply(message.headers?.get(LARGE_REPLY_HEADER) ?? "");
    if (typeof stored === "string") throw new Error(stored);
    const envelope = message.json<{ ok: boolean; error?: { code: string; message: string } }>();
    const base = `${h.subjects.prefix}.large.${stored.recipient}.${stored.id}`;
    expect({
      code: envelope.error?.code,
      names: envelope.error?.message.includes(
        `stored in the JetStream stream ${h.subjects.streams.large.name} as ${base}.<chunk>`,
      ),
      // No NATS identities here: the reply subject is no role's inbox.
      recipient: stored.recipient,
      overOneMessage: stored.bytes > MAX_PAYLOAD && stored.chunks > 1,
    }).toEqual({ code: "payload_too_large", names: true, recipient: "_", overOneMessage: true });
  });
});

/**
 * Replies larger than max_payload through the large-replies stream, on the test NATS: stored in
 * chunks by the service that answers, read whole by the caller's bus, checked against the
 * header's count, size and digest, never deleted, and bounded by the process's budget.
 */
import { createHash } from "node:crypto";
import { type Msg, headers as natsHeaders } from "@nats-io/transport-node";
import { createSubjects, type Subjects, WireError } from "@toolbus/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Bus } from "../src/bus.js";
import {
  chunkSubject,
  formatStoredReply,
  LARGE_REPLY_HEADER,
  readerOf,
  type StoredReply,
} from "../src/core/large-reply.js";
import { largeReplyOptions } from "../src/large-replies.js";
import { LARGE_REPLIES_BUDGET } from "../src/large-reply-budget.js";
import { jetStreamAssets } from "../src/provision.js";
import type { SentReply } from "../src/serve.js";
import { StoredReplyAnswer } from "../src/serve.js";
import { startBus, uniqueName } from "./support.js";

const Request = z.object({ n: z.number() });
const Result = z.object({ n: z.number(), text: z.string() });

const cleanups: Array<() => Promise<unknown>> = [];
const budgetBefore = LARGE_REPLIES_BUDGET.limit;
afterEach(async () => {
  LARGE_REPLIES_BUDGET.limit = budgetBefore;
  await Promise.allSettled(cleanups.splice(0).map((cleanup) => cleanup()));
});

/** Text that changes every byte position, with multi-byte characters across chunk boundaries. */
function varied(bytes: number): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const part = `${i.toString(36)}é☃😀${String.fromCharCode(97 + (i % 26))}`;
    parts.push(part);
    size += Buffer.byteLength(part);
  }
  return parts.join("");
}

/** The large-replies stream of a prefix, as the provisioner makes it, with these limits. */
async function provisionLargeStream(
  bus: Bus,
  subjects: Subjects,
  limits: { maxAgeMs: number; maxBytes: number },
) {
  const limitsOf = { maxAgeMs: 60_000, maxBytes: 1024 * 1024 };
  const settings = {
    replicas: 1,
    events: limitsOf,
    memory: limitsOf,
    largeReplies: limits,
    gatewaySessionTtlMs: 60_000,
    memoryConsumer: { ackWaitMs: 30_000, maxAckPending: 1_000 },
  };
  const asset = jetStreamAssets(subjects, settings).find(
    (a) => a.config.name === subjects.streams.large.name,
  );
  await (await bus.jsm()).streams.add(asset!.config);
}

/** A served endpoint whose replies go to a large-replies stream of a prefix of its own. */
async function largeEndpoint(handler: (n: number, sent: Promise<SentReply>) => Promise<unknown>) {
  const server = await startBus();
  const client = await startBus();
  const subjects = createSubjects(uniqueName("lr"));
  const options = largeReplyOptions(subjects, { maxAgeMs: 60_000, maxBytes: 256 * 1024 * 1024 });
  await provisionLargeStream(server.bus, subjects, { maxAgeMs: options.ttlMs, maxBytes: options.maxBytes });
  const jsm = await server.bus.jsm();
  cleanups.push(() => jsm.streams.delete(options.stream));
  const subject = `${subjects.prefix}.big`;
  await server.bus.serve(
    { subject, name: "big", request: Request, largeReplies: options },
    (request, ctx) => handler(request.n, ctx.sent) as Promise<never>,
  );
  const messages = async () => (await jsm.streams.info(options.stream)).state.messages;
  return { server, client, subject, subjects, options, jsm, messages };
}

describe("a reply larger than max_payload", () => {
  it("reaches bus.request whole, stored in chunks addressed to the caller, none deleted once read", async () => {
    const text = varied(3 * 1024 * 1024);
    const sent: SentReply[] = [];
    const { client, subject, subjects, messages } = await largeEndpoint(async (n, replied) => {
      void replied.then((reply) => sent.push(reply));
      return { n, text };
    });
    const reply = await client.bus.request(subject, { n: 7 }, Result);
    const stored = sent[0]?.stored;
    expect({ intact: reply.n === 7 && reply.text === text, stored, messages: await messages() }).toEqual({
      intact: true,
      // Addressed to the reader the request named: the client's own name.
      stored: {
        prefix: subjects.prefix,
        recipient: client.bus.service.name,
        id: expect.stringMatching(/^[A-Za-z0-9]+$/),
        chunks: 4,
        bytes: Buffer.byteLength(JSON.stringify({ ok: true, result: { n: 7, text } })),
        sha256: createHash("sha256")
          .update(JSON.stringify({ ok: true, result: { n: 7, text } }))
          .digest("hex"),
      },
      // Read, not deleted: the stream's max age removes it.
      messages: 4,
    });
  });

  it("is answered again from where it was stored when the handler says so, storing nothing new", async () => {
    const text = varied(2 * 1024 * 1024);
    let first: StoredReply | undefined;
    const { client, subject, messages } = await largeEndpoint(async (n, replied) => {
      if (first) return new StoredReplyAnswer(first);
      void replied.then((reply) => {
        first = reply.stored;
      });
      return { n, text };
    });
    const once = await client.bus.request(subject, { n: 1 }, Result);
    const stored = await messages();
    const again = await client.bus.request(subject, { n: 1 }, Result);
    expect({ same: again.text === text && once.text === text, grew: (await messages()) - stored }).toEqual({
      same: true,
      grew: 0,
    });
  });

  it("is refused, saying which budget, its size and what to change, when it is larger than the process's budget", async () => {
    LARGE_REPLIES_BUDGET.limit = 1024 * 1024;
    const { client, subject, messages } = await largeEndpoint(async (n) => ({
      n,
      text: varied(3 * 1024 * 1024),
    }));
    const refused = await client.bus.request(subject, { n: 1 }, Result).catch((error: unknown) => error);
    expect({ refused, stored: await messages() }).toEqual({
      refused: expect.objectContaining({
        code: "payload_too_large",
        message: expect.stringMatching(
          /^the reply of big is \d+ bytes, over the bus limit of \d+ bytes \(NATS max_payload\), and it could not be stored in the stream [A-Z0-9_]+_LARGE: \d+ bytes is larger than this process's budget for large replies in flight \(\[bus\] large_replies_in_flight_bytes = 1048576, 1 MiB\); raise \[bus\] large_replies_in_flight_bytes, retry later, or ask for less$/,
        ),
      }),
      stored: 0,
    });
    expect(refused).toBeInstanceOf(WireError);
  });
});

/**
 * A service that answers with a small reply naming chunks it published itself: `damage` changes
 * what the header says, to see what the reader makes of it.
 */
async function rawStorer(payload: string, damage: (reply: StoredReply) => StoredReply) {
  const { bus } = await startBus();
  const client = await startBus();
  const subjects = createSubjects(uniqueName("lr"));
  const options = largeReplyOptions(subjects, { maxAgeMs: 60_000, maxBytes: 64 * 1024 * 1024 });
  await provisionLargeStream(bus, subjects, { maxAgeMs: options.ttlMs, maxBytes: options.maxBytes });
  const jsm = await bus.jsm();
  cleanups.push(() => jsm.streams.delete(options.stream));
  const subject = `${subjects.prefix}.raw`;
  const data = Buffer.from(payload);
  bus.nc.subscribe(subject, {
    callback: (_error, msg) => void answer(msg),
  });
  async function answer(msg: Msg) {
    const reply: StoredReply = {
      prefix: subjects.prefix,
      // Stored for the reader the request names, as serve stores a reply.
      recipient: readerOf(msg.headers),
      id: uniqueName("r"),
      chunks: 2,
      bytes: data.length,
      sha256: createHash("sha256").update(data).digest("hex"),
    };
    const half = Math.ceil(data.length / 2);
    await bus.js().publish(chunkSubject(reply, 0), data.subarray(0, half));
    await bus.js().publish(chunkSubject(reply, 1), data.subarray(half));
    const headers = natsHeaders();
    headers.set(LARGE_REPLY_HEADER, formatStoredReply(damage(reply)));
    msg.respond(
      JSON.stringify({
        ok: false,
        error: { code: "payload_too_large", message: "stored", retryable: false },
      }),
      {
        headers,
      },
    );
  }
  await bus.nc.flush();
  return { client: client.bus as Bus, subject };
}

describe("the reader of a stored reply", () => {
  const text = varied(1536 * 1024);
  const payload = JSON.stringify({ ok: true, result: { n: 1, text } });

  it("reads what the header names when it is whole (the seam below is sound)", async () => {
    const { client, subject } = await rawStorer(payload, (reply) => reply);
    expect((await client.request(subject, {}, Result)).text).toBe(text);
  });

  it.each<[string, (reply: StoredReply) => StoredReply, RegExp]>([
    [
      "a digest that differs",
      (r) => ({ ...r, sha256: "0".repeat(64) }),
      /the SHA-256 of its chunks differs from its header's: the stored reply is damaged$/,
    ],
    [
      "fewer bytes than the chunks hold",
      (r) => ({ ...r, bytes: r.bytes - 10 }),
      /its chunks hold more than the \d+ bytes its header names$/,
    ],
    [
      "more bytes than the chunks hold",
      (r) => ({ ...r, bytes: r.bytes + 10 }),
      /its chunks hold \d+ bytes, and its header names \d+$/,
    ],
    [
      "chunks that are not there",
      (r) => ({ ...r, id: `${r.id}X` }),
      /chunk 0 of 2 is not in the stream [A-Z0-9_]+_LARGE: the reply expired before it was read \(\[bus\] large_reply_ttl_sec\)$/,
    ],
    [
      "another role's replies",
      (r) => ({ ...r, recipient: "gateway" }),
      /it is addressed to gateway, and this identity reads the replies addressed to svc\S+$/,
    ],
  ])("refuses %s with transport_error saying why", async (_case, damage, why) => {
    const { client, subject } = await rawStorer(payload, damage);
    const refused = await client.request(subject, {}, Result).catch((error: unknown) => error);
    expect(refused).toMatchObject({
      code: "transport_error",
      message: expect.stringMatching(
        /^the reply on \S+ was too large for one NATS message and was stored \(\S+\), but it could not be read: /,
      ),
    });
    expect((refused as Error).message).toMatch(why);
  });

  it("refuses a reply larger than the process's budget with payload_too_large naming the budget", async () => {
    const { client, subject } = await rawStorer(payload, (reply) => reply);
    LARGE_REPLIES_BUDGET.limit = 1024 * 1024;
    await expect(client.request(subject, {}, Result)).rejects.toMatchObject({
      code: "payload_too_large",
      message: expect.stringMatching(
        /could not be read: \d+ bytes is larger than this process's budget for large replies in flight \(\[bus\] large_replies_in_flight_bytes = 1048576, 1 MiB\)/,
      ),
    });
  });
});

describe("the large-replies stream", () => {
  it("refuses a purge and a message delete, whoever asks", async () => {
    const { jsm, options, client, subject } = await largeEndpoint(async (n) => ({
      n,
      text: varied(2 * 1024 * 1024),
    }));
    await client.bus.request(subject, { n: 1 }, Result);
    const purge = await jsm.streams.purge(options.stream).catch((error: unknown) => error);
    const remove = await jsm.streams.deleteMessage(options.stream, 1).catch((error: unknown) => error);
    expect({
      purge: String(purge),
      remove: String(remove),
      left: (await jsm.streams.info(options.stream)).state.messages,
    }).toEqual({
      purge: expect.stringMatching(/purge not permitted/i),
      remove: expect.stringMatching(/delete not permitted/i),
      left: 3,
    });
  });
});

describe("a large reply read while a request is served", () => {
  it("stays held against the budget until that request is answered, and its reply waits for nobody", async () => {
    const text = varied(2 * 1024 * 1024);
    const { server, subject, subjects, options } = await largeEndpoint(async (n) => ({ n, text }));
    const relay = `${subjects.prefix}.relay`;
    const seen: number[] = [];
    // A service that asks `big` and answers with what it got, as the dispatcher answers with a
    // connector's result: the bytes it read are held while it works on them.
    await server.bus.serve(
      { subject: relay, name: "relay", request: Request, largeReplies: options },
      async (request) => {
        const got = await server.bus.request(subject, request, Result);
        seen.push(LARGE_REPLIES_BUDGET.inFlight);
        return got;
      },
    );
    LARGE_REPLIES_BUDGET.limit = 3 * 1024 * 1024;
    const client = await startBus();
    const reply = await client.bus.request(relay, { n: 3 }, Result);
    // The client's own read is held for the rest of this turn, while it works on what it got.
    const heldThisTurn = LARGE_REPLIES_BUDGET.inFlight;
    await new Promise((resolve) => setImmediate(resolve));
    expect({
      heldThisTurn: heldThisTurn > 2 * 1024 * 1024,
      whole: reply.text === text,
      heldWhileWorking: seen[0]! > 2 * 1024 * 1024,
      heldAfter: LARGE_REPLIES_BUDGET.inFlight,
    }).toEqual({ heldThisTurn: true, whole: true, heldWhileWorking: true, heldAfter: 0 });
  });
});

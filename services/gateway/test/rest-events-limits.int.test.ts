/**
 * The limits of `GET /v1/events`, on the route mounted alone on real NATS: keep-alive comments,
 * bus subscriptions taken with the first client and given back with the last, and a client that
 * stops reading dropped while one that reads gets every event.
 */
import { type IncomingMessage, request } from "node:http";
import { connect, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import { createLogger } from "@toolbus/bus";
import { type CallEndEvent, createSubjects, type Subjects } from "@toolbus/protocol";
import { isolation } from "@toolbus/testkit";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventsSse } from "../src/adapters/http/events-sse.js";
import { readSse } from "./support/sse-events.js";
import { eventually, natsUrl } from "./support/stack.js";

async function openEvents(url: string, query = "") {
  const response = await fetch(`${url}/v1/events${query}`, { headers: { accept: "text/event-stream" } });
  const events = readSse(response);
  const first = await events.next();
  return { events, first };
}

describe("the events route's limits", () => {
  let nc: NatsConnection;
  let subjects: Subjects;
  let app: FastifyInstance;
  let url: string;
  const taken: Subscription[] = [];

  beforeAll(async () => {
    nc = await connect({ servers: natsUrl() });
    subjects = createSubjects(isolation("gw_sse_limits").prefix);
    // Every subscription the route takes, to see that it gives them back.
    const spied = new Proxy(nc, {
      get(target, property, receiver) {
        if (property !== "subscribe") {
          const value = Reflect.get(target, property, receiver);
          return typeof value === "function" ? value.bind(target) : value;
        }
        return (...args: Parameters<NatsConnection["subscribe"]>) => {
          const subscription = target.subscribe(...args);
          taken.push(subscription);
          return subscription;
        };
      },
    });
    app = Fastify({ logger: false });
    await app.register(
      eventsSse({
        nc: spied,
        subjects,
        logger: createLogger({ service: "gateway", version: "test", level: "silent" }),
        keepAliveMs: 100,
        maxBufferedBytes: 1024 * 1024,
      }),
    );
    url = await app.listen({ port: 0, host: "127.0.0.1" });
  });

  afterAll(async () => {
    await app?.close();
    await nc?.close();
  });

  it("keeps an idle stream open with comment lines", async () => {
    const { events } = await openEvents(url);
    // Comments are read along with events: wait for an event that never comes, reading them. The
    // window holds 20 keep-alive periods, so a loaded machine that delays the timers still sends 2.
    await expect(events.next(2_000)).rejects.toThrow("no SSE event within 2000 ms");
    events.cancel();
    expect(events.comments.filter((comment) => comment === "keep-alive").length).toBeGreaterThanOrEqual(2);
  });

  it("takes its bus subscriptions with the first client and gives them back when the last one leaves", async () => {
    const before = taken.length;
    const one = await openEvents(url);
    const two = await openEvents(url);
    const open = taken.slice(before);
    const whileOpen = open.filter((subscription) => !subscription.isClosed()).length;
    one.events.cancel();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const afterOne = open.filter((subscription) => !subscription.isClosed()).length;
    two.events.cancel();
    await eventually("the subscriptions to close", () =>
      open.every((subscription) => subscription.isClosed()) ? true : undefined,
    );
    expect({ taken: open.length, whileOpen, afterOne }).toEqual({ taken: 7, whileOpen: 7, afterOne: 7 });
  });

  it("drops a client that stops reading, while one that reads gets every event", async () => {
    const reading = await openEvents(url, "?kinds=call.end");
    const stalled = await stalledClient(`${url}/v1/events?kinds=call.end`);
    // 20 MB in all: more than the socket buffers and the route's 1 MiB bound of what is unread.
    const published = 200;
    const text = "x".repeat(100_000);
    const readingGot: string[] = [];
    for (let index = 0; index < published; index++) {
      nc.publish(subjects.callEnd, JSON.stringify(callEnd(`flood-${index}`, text)));
      // Paced by the reading client, so only the stalled one falls behind.
      readingGot.push(((await reading.events.next()).data as CallEndEvent).callId);
    }
    reading.events.cancel();
    const stalledGot = await stalled.resumeAndCount();
    // The stalled client got what fitted in the buffers, then its stream ended: it was dropped.
    expect({ readingGot, stalledGotSome: stalledGot > 0, stalledDropped: stalledGot < published }).toEqual({
      readingGot: Array.from({ length: published }, (_, index) => `flood-${index}`),
      stalledGotSome: true,
      stalledDropped: true,
    });
  }, 60_000);
});

function callEnd(callId: string, text: string): CallEndEvent {
  return {
    callId,
    invocation: { server: "alpha", tool: "get-thing", arguments: null },
    at: new Date().toISOString(),
    status: "completed",
    durationMs: 1,
    result: { ok: { content: [{ type: "text", text }] } },
  };
}

/** An SSE client that reads the headers, then nothing; later it reads what it can until the stream ends. */
async function stalledClient(url: string): Promise<{ resumeAndCount(): Promise<number> }> {
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = request(url, { headers: { accept: "text/event-stream" } }, resolve);
    req.on("error", reject);
    req.end();
  });
  response.pause();
  return {
    resumeAndCount: () =>
      new Promise((resolve) => {
        let text = "";
        const done = () => resolve(text.split("event: call.end\n").length - 1);
        response.on("data", (chunk: Buffer) => {
          text += chunk.toString("utf8");
        });
        response.once("end", done);
        response.once("error", done);
        response.once("close", done);
        response.resume();
      }),
  };
}

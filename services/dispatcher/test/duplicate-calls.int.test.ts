/**
 * Duplicate callIds (issue item 5): a request that repeats a callId in flight or recently
 * finished gets the first call's reply, and the server is called once (its call log says so).
 * The callId reused for another call (tool or arguments) is refused (issue 12 item 3).
 */
import { callIdReusedMessage } from "@toolbus/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { notRunReply } from "./support/expect.js";
import { DispatchHarness, eventually } from "./support/harness.js";

let h: DispatchHarness;

beforeAll(async () => {
  h = await DispatchHarness.start({
    label: "duplicates",
    script: { tools: [{ name: "slow", behavior: { kind: "delay", ms: 400 } }, { name: "echo" }] },
  });
});
afterAll(async () => h?.close());

const serverCallsFor = async (callId: string) =>
  (await h.scripted!.calls()).filter((call) => call._meta?.callId === callId).length;

describe("a repeated callId", () => {
  it("while the first is in flight: one server call, the same reply for both", async () => {
    const callId = h.callId();
    const request = { callId, tool: "mcp__scripted__slow", arguments: '{"n":1}' };
    const first = h.ok(request);
    await eventually("the first call to begin", () =>
      h.eventsOf(callId).some((event) => event.phase === "begin") ? true : undefined,
    );
    const [a, b] = await Promise.all([first, h.ok(request)]);
    expect({ same: b, status: a.status, serverCalls: await serverCallsFor(callId) }).toEqual({
      same: a,
      status: "completed",
      serverCalls: 1,
    });
  });

  it("after the first finished: one server call, one begin and one end, the first reply again", async () => {
    const callId = h.callId();
    const first = await h.ok({ callId, tool: "mcp__scripted__echo", arguments: '{"n":2}' });
    await h.endedEvents(callId);
    const again = await h.ok({ callId, tool: "mcp__scripted__echo", arguments: '{"n":2}' });
    // A later call's end arrives after anything the repeat could have published.
    const marker = await h.ok({ tool: "mcp__scripted__echo", arguments: "{}" });
    await h.endedEvents(marker.callId);
    expect({
      again,
      serverCalls: await serverCallsFor(callId),
      phases: h.eventsOf(callId).map((event) => event.phase),
    }).toEqual({ again: first, serverCalls: 1, phases: ["begin", "end"] });
  });

  it.each([
    { change: "other arguments", call: { tool: "mcp__scripted__echo", arguments: '{"n":4}' } },
    { change: "another tool", call: { tool: "mcp__scripted__slow", arguments: '{"n":3}' } },
  ])("with $change: refused, neither run nor answered with the first call's reply", async ({ call }) => {
    const callId = h.callId();
    const first = await h.ok({ callId, tool: "mcp__scripted__echo", arguments: '{"n":3}' });
    const different = await h.ok({ callId, ...call });
    // The same call again, keys spaced differently, still gets the first reply.
    const retried = await h.ok({ callId, tool: "mcp__scripted__echo", arguments: '{ "n": 3 }' });
    expect({ different, retried, serverCalls: await serverCallsFor(callId) }).toEqual({
      different: notRunReply(different, {
        callId,
        status: "failed",
        error: callIdReusedMessage(callId),
        catalogRevision: first.catalogRevision,
      }),
      retried: first,
      serverCalls: 1,
    });
  });

  it("many repeats at once: one server call", async () => {
    const callId = h.callId();
    const replies = await Promise.all(
      Array.from({ length: 20 }, () => h.ok({ callId, tool: "mcp__scripted__slow", arguments: '{"n":5}' })),
    );
    expect({
      distinctReplies: new Set(replies.map((reply) => JSON.stringify(reply))).size,
      serverCalls: await serverCallsFor(callId),
    }).toEqual({ distinctReplies: 1, serverCalls: 1 });
  });
});

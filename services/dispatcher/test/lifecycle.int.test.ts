/**
 * Lifecycle events and the history projection, with the dispatcher as its own process
 * (`src/main.ts`) next to the catalog process: every call that got past argument parsing has
 * exactly one begin and one end on JetStream, in that order; `dispatch.history` and
 * `replayThreadItems` fold a thread's events into McpToolCallItems; SIGTERM lets a call in
 * flight finish.
 */
import { Writable } from "node:stream";
import { type Bus, connectBus, createLogger } from "@toolbus/bus";
import type { McpToolCallItem, ToolCallReply } from "@toolbus/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { replayThreadItems } from "../src/adapters/nats/call-history.js";
import { type CallInput, DispatchHarness, eventually, type StoredEvent } from "./support/harness.js";

let h: DispatchHarness;
let reader: Bus;

beforeAll(async () => {
  h = await DispatchHarness.start({
    label: "lifecycle",
    script: {
      tools: [
        { name: "echo" },
        { name: "failing", behavior: { kind: "error_result", text: "it broke" } },
        { name: "boom", behavior: { kind: "throw", message: "boom" } },
        { name: "hidden", _meta: { ui: { visibility: ["app"] } } },
        { name: "slow", behavior: { kind: "delay", ms: 300 } },
      ],
    },
    dispatcherProcess: true,
  });
  const logger = createLogger({
    service: "history-reader",
    version: "test",
    level: "silent",
    destination: new Writable({ write: (_chunk, _encoding, done) => done() }),
  });
  reader = await connectBus({
    natsUrl: h.natsUrl,
    service: { name: "history-reader", version: "0.1.0" },
    logger,
  });
});
afterAll(async () => {
  await reader?.close();
  await h?.close();
});

/** Each kind of call, and the end status its events must show (none: no events at all). */
const KINDS: Array<{ kind: string; input: Omit<CallInput, "callId">; end: "completed" | "failed" | null }> = [
  { kind: "completed", input: { tool: "mcp__scripted__echo", arguments: '{"a":1}' }, end: "completed" },
  { kind: "isError", input: { tool: "mcp__scripted__failing", arguments: "" }, end: "failed" },
  { kind: "server error", input: { tool: "mcp__scripted__boom", arguments: "" }, end: "failed" },
  { kind: "unknown tool", input: { tool: "mcp__scripted__nope", arguments: "" }, end: "failed" },
  { kind: "hidden tool", input: { tool: "mcp__scripted__hidden", arguments: "" }, end: "failed" },
  { kind: "not an object", input: { tool: "mcp__scripted__echo", arguments: '"text"' }, end: "failed" },
  { kind: "slow", input: { tool: "mcp__scripted__slow", arguments: "{}" }, end: "completed" },
  { kind: "invalid JSON", input: { tool: "mcp__scripted__echo", arguments: "{nope" }, end: null },
];

describe("lifecycle events on JetStream", () => {
  it("stores exactly one begin then one end per call, and nothing for invalid JSON", async () => {
    const thread = "thread-pairs";
    const calls = KINDS.flatMap((kind) => [1, 2, 3].map(() => ({ ...kind, callId: h.callId() })));
    const replies = await Promise.all(
      calls.map((call) => h.ok({ ...call.input, callId: call.callId, threadId: thread })),
    );
    const stored = await eventually("every end event stored", async () => {
      const events = await h.storedCallEvents();
      const ends = events.filter((event) => event.phase === "end").length;
      return ends >= calls.filter((call) => call.end !== null).length ? events : undefined;
    });
    const byCall = (callId: string) => stored.filter((event) => event.body.callId === callId);
    const shape = (events: StoredEvent[]) =>
      events.map((event) => ({
        phase: event.phase,
        status: "status" in event.body ? event.body.status : undefined,
      }));
    expect(calls.map((call) => ({ kind: call.kind, events: shape(byCall(call.callId)) }))).toEqual(
      calls.map((call) => ({
        kind: call.kind,
        events:
          call.end === null
            ? []
            : [
                { phase: "begin", status: undefined },
                { phase: "end", status: call.end },
              ],
      })),
    );
    expect({
      beginsBeforeEnds: calls.every((call) => {
        const [begin, end] = byCall(call.callId);
        return call.end === null || (begin !== undefined && end !== undefined && begin.seq < end.seq);
      }),
      onlyThisTestsCalls: stored.every((event) => calls.some((call) => call.callId === event.body.callId)),
      repliesMatchEvents: replies.every((reply, i) => {
        const end = byCall(reply.callId).find((event) => event.phase === "end")?.body;
        return calls[i]!.end === null
          ? reply.status === "invalid_arguments"
          : end !== undefined && "durationMs" in end && end.durationMs === reply.durationMs;
      }),
    }).toEqual({ beginsBeforeEnds: true, onlyThisTestsCalls: true, repliesMatchEvents: true });
  });
});

describe("history (McpToolCallItem projection)", () => {
  /** The item a finished call must appear as, from its reply and what was sent. */
  const itemOf = (reply: ToolCallReply, invocation: { server: string; tool: string; arguments: unknown }) =>
    ({
      id: reply.callId,
      ...invocation,
      status: reply.status === "completed" ? "completed" : "failed",
      ...(reply.result ? { result: reply.result } : { error: { message: reply.error } }),
      durationMs: reply.durationMs,
    }) as McpToolCallItem;

  it("replays one thread's calls, in the order they began, with their final status", async () => {
    const mine = "thread-mine";
    const first = await h.ok({ threadId: mine, tool: "mcp__scripted__echo", arguments: '{"n":1}' });
    const other = await h.ok({ threadId: "thread-other", tool: "mcp__scripted__echo", arguments: "{}" });
    const skipped = await h.ok({ threadId: mine, tool: "mcp__scripted__hidden", arguments: "" });
    const failed = await h.ok({ threadId: mine, tool: "mcp__scripted__failing", arguments: '{"n":3}' });
    const expected = [
      itemOf(first, { server: "scripted", tool: "echo", arguments: { n: 1 } }),
      itemOf(skipped, { server: "scripted", tool: "hidden", arguments: null }),
      itemOf(failed, { server: "scripted", tool: "failing", arguments: { n: 3 } }),
    ];
    const viaSubject = await eventually("the three items finished", async () => {
      const envelope = await h.history(mine);
      return envelope.ok &&
        envelope.result.items.length === 3 &&
        envelope.result.items.every((i) => i.status !== "inProgress")
        ? envelope
        : undefined;
    });
    expect({
      viaSubject,
      direct: await replayThreadItems({ bus: reader, subjects: h.subjects, threadId: mine }),
      other: (await replayThreadItems({ bus: reader, subjects: h.subjects, threadId: "thread-other" })).map(
        (item) => item.id,
      ),
    }).toEqual({
      viaSubject: { ok: true, result: { items: expected } },
      direct: expected,
      other: [other.callId],
    });
  });

  it("replays nothing for a thread that made no calls", async () => {
    expect(await replayThreadItems({ bus: reader, subjects: h.subjects, threadId: "thread-silent" })).toEqual(
      [],
    );
  });
});

describe("the dispatcher process", () => {
  it("finishes a call in flight on SIGTERM, then exits 0", async () => {
    const pending = h.ok({ tool: "mcp__scripted__slow", arguments: '{"s":1}' });
    await eventually("the slow call to begin", () =>
      h.events.some(
        (event) => event.phase === "begin" && event.body.invocation.tool === "slow" && !event.body.threadId,
      )
        ? true
        : undefined,
    );
    const exited = h.dispatcherProcess!.stop();
    const reply = await pending;
    const exitCode = await exited;
    const stored = (await h.storedCallEvents()).filter((event) => event.body.callId === reply.callId);
    expect({
      status: reply.status,
      result: reply.result,
      exitCode,
      logged: h.dispatcherProcess!.logs.some((line) => line.msg === "shut down cleanly"),
      stored: stored.map((event) => event.phase),
    }).toEqual({
      status: "completed",
      result: { content: [{ type: "text", text: '{"s":1}' }] },
      exitCode: 0,
      logged: true,
      stored: ["begin", "end"],
    });
  });
});

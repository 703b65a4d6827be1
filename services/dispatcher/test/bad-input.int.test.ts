/**
 * Bad input (issue "Bad input"): oversize arguments, deep nesting, arguments that are not an
 * object, names and ids past their limits, a catalog revision from the future, a result larger
 * than the bus carries. Each gets a clear answer, nothing crashes, and the events stream keeps
 * exactly one begin and one end for every call that got past argument parsing.
 */
import { Writable } from "node:stream";
import { type Bus, connectBus, createLogger } from "@toolbus/bus";
import { ToolCallReplySchema, WireError } from "@toolbus/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { argumentsOmittedNote } from "../src/core/event-fit.js";
import { errorBody, lifecycle, notRunReply, phased } from "./support/expect.js";
import { DispatchHarness, eventually } from "./support/harness.js";

let h: DispatchHarness;
let client: Bus;
let revision: number;
const MAX_PAYLOAD = 1024 * 1024;

beforeAll(async () => {
  h = await DispatchHarness.start({
    label: "bad_input",
    script: { tools: [{ name: "echo" }, { name: "huge", behavior: { kind: "huge", bytes: 1_500_000 } }] },
    // The largest reply toolbus carries, at its minimum: the 1.5 MB result is over it.
    tables: "[bus]\nmax_reply_bytes = 1048576",
  });
  revision = (await h.catalog()).revision;
  client = await connectBus({
    natsUrl: h.natsUrl,
    service: { name: "bad-input-client", version: "0.1.0" },
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
});

/** Waits until a later call ended, so anything `callIds` could have published has arrived too. */
async function settle(): Promise<void> {
  const marker = await h.ok({ tool: "mcp__scripted__echo", arguments: "{}" });
  await h.endedEvents(marker.callId);
}

const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

describe("oversize and deep arguments", () => {
  it("refuses 20 MB of arguments at the client, over the bus's max_payload, and the dispatcher never sees them", async () => {
    const callId = h.callId();
    const body = {
      callId,
      tool: "mcp__scripted__echo",
      arguments: JSON.stringify({ s: "x".repeat(20_000_000) }),
    };
    const error = await client.request(h.subjects.dispatchCall, body, ToolCallReplySchema).catch((e) => e);
    await settle();
    expect({
      error: error instanceof WireError ? { code: error.code, message: error.message } : String(error),
      events: h.eventsOf(callId),
    }).toEqual({
      error: {
        code: "payload_too_large",
        message:
          `the request on ${h.subjects.dispatchCall} is ${Buffer.byteLength(JSON.stringify(body))} bytes, ` +
          `more than one NATS message holds (max_payload: ${client.nc.info?.max_payload} bytes); ` +
          "send less, or raise max_payload in the NATS server's configuration",
      },
      events: [],
    });
  });

  it("carries 700 KB of arguments and their echo, keeping the end event within the bus limit", async () => {
    const callId = h.callId();
    const args = { s: "y".repeat(700_000) };
    const reply = await h.ok({ callId, tool: "mcp__scripted__echo", arguments: JSON.stringify(args) });
    const events = await h.endedEvents(callId);
    const end = events.find((event) => event.phase === "end")!.body;
    const copy = "result" in end && "ok" in end.result ? JSON.stringify(end.result.ok) : "";
    expect({
      status: reply.status,
      rawResultWhole: reply.result?.content[0],
      phases: events.map((event) => event.phase),
      endArguments: end.invocation.arguments,
      endEventFits: Buffer.byteLength(JSON.stringify(end)) <= MAX_PAYLOAD,
      copyTruncated: /…\d+ chars truncated…/.test(copy),
    }).toEqual({
      status: "completed",
      rawResultWhole: { type: "text", text: JSON.stringify(args) },
      phases: ["begin", "end"],
      endArguments: args,
      endEventFits: true,
      copyTruncated: true,
    });
  });

  it("answers arguments nested past 512 levels as invalid, with no events", async () => {
    const callId = h.callId();
    const reply = await h.ok({ callId, tool: "mcp__scripted__echo", arguments: nested(600) });
    await settle();
    const message = "err: arguments nest deeper than 512 levels at position 2560; send flatter arguments";
    expect({ reply, events: h.eventsOf(callId) }).toEqual({
      reply: {
        callId,
        status: "invalid_arguments",
        output: { success: false, body: message },
        error: message,
        durationMs: 0,
        wallTimeMs: reply.wallTimeMs,
        catalogRevision: revision,
      },
      events: [],
    });
  });

  it("calls the server with arguments nested 500 levels deep, and with brackets inside strings", async () => {
    const deep = await h.ok({ tool: "mcp__scripted__echo", arguments: nested(500) });
    const brackets = await h.ok({
      tool: "mcp__scripted__echo",
      arguments: JSON.stringify({ s: "[".repeat(5_000) }),
    });
    expect({
      deep: { status: deep.status, text: deep.result?.content[0] },
      brackets: brackets.status,
    }).toEqual({
      deep: { status: "completed", text: { type: "text", text: nested(500) } },
      brackets: "completed",
    });
  });
});

describe("arguments that are not an object", () => {
  it.each([
    { name: "a JSON string", text: '"hello"', value: "hello", shown: '"hello"' },
    { name: "an array", text: "[1, 2]", value: [1, 2], shown: "[1,2]" },
    { name: "a number", text: "42", value: 42, shown: "42" },
    { name: "null", text: "null", value: null, shown: "null" },
  ])("refuses $name with the reference's message, server untouched", async (row) => {
    const before = (await h.scripted!.calls()).length;
    const callId = h.callId();
    const reply = await h.ok({ callId, tool: "mcp__scripted__echo", arguments: row.text });
    const message = `MCP tool arguments must be a JSON object, got ${row.shown}`;
    expect({
      reply,
      events: phased(await h.endedEvents(callId)),
      serverCalls: (await h.scripted!.calls()).length - before,
    }).toEqual({
      reply: notRunReply(reply, {
        callId,
        status: "failed",
        server: "scripted",
        tool: "echo",
        hookName: "mcp__scripted__echo",
        error: message,
        catalogRevision: revision,
      }),
      events: lifecycle(
        { callId, invocation: { server: "scripted", tool: "echo", arguments: row.value } },
        { status: "failed", durationMs: 0, result: { err: message } },
      ),
      serverCalls: 0,
    });
  });
});

describe("names, ids and revisions", () => {
  it.each([
    {
      name: "a callId of 10 KB",
      body: { callId: "c".repeat(10_240), tool: "mcp__scripted__echo", arguments: "{}" },
      message: "callId: Too big: expected string to have <=256 characters",
    },
    {
      name: "a tool name over 1024 characters",
      body: { callId: "long-name", tool: "t".repeat(1_025), arguments: "{}" },
      message: "tool: Too big: expected string to have <=1024 characters",
    },
    {
      name: "an empty namespace",
      body: { callId: "empty-namespace", tool: { namespace: "", name: "echo" }, arguments: "{}" },
      message: "tool.namespace: Too small: expected string to have >=1 characters",
    },
    {
      name: "arguments that are not text",
      body: { callId: "object-arguments", tool: "mcp__scripted__echo", arguments: { a: 1 } },
      message: "arguments: Invalid input: expected string, received object",
    },
    {
      name: "a negative catalogRevision",
      body: { callId: "negative", tool: "mcp__scripted__echo", arguments: "{}", catalogRevision: -1 },
      message: "catalogRevision: Too small: expected number to be >=0",
    },
    {
      name: "a body that is not JSON",
      body: "{callId",
      message: `request body is not valid JSON (Expected property name or '}' in JSON at position 1); send one JSON object`,
    },
  ])("answers $name with bad_request naming the field", async (row) => {
    const payload = typeof row.body === "string" ? row.body : JSON.stringify(row.body);
    const reply = await h.nc.request(h.subjects.dispatchCall, payload, { timeout: 10_000 });
    expect(reply.json()).toEqual({
      ok: false,
      error: { code: "bad_request", message: row.message, retryable: false },
    });
  });

  it("treats a long but valid name the catalog does not know as not available", async () => {
    const name = "n".repeat(1_024);
    const reply = await h.ok({ tool: name, arguments: "{}" });
    expect({ status: reply.status, error: reply.error }).toEqual({
      status: "skipped",
      error: `MCP tool \`${name}\` is not available to the model`,
    });
  });

  it("refuses a catalog revision from the future after a bounded wait, with no events", async () => {
    const callId = h.callId();
    const started = Date.now();
    // Bounded: the refusal must come within the request's timeout. No upper bound on the clock,
    // which a loaded machine can stretch; the lower one says it waited (the dispatcher waits 2 s).
    const envelope = await h.call(
      { callId, tool: "mcp__scripted__echo", arguments: "{}", catalogRevision: 1_000_000_000 },
      15_000,
    );
    const waitedMs = Date.now() - started;
    await settle();
    expect({ envelope, events: h.eventsOf(callId), waited: waitedMs >= 1_000 }).toEqual({
      envelope: {
        ok: false,
        error: {
          code: "bad_request",
          message: `catalogRevision 1000000000 is ahead of the catalog (revision ${revision}); pass the revision that toolbus.catalog.get returned`,
          retryable: false,
        },
      },
      events: [],
      waited: true,
    });
  });

  it("waits for a revision its copy has not seen yet, then serves the call", async () => {
    const ahead = (await h.catalog()).revision + 1;
    const pending = h.ok({ tool: "mcp__scripted__echo", arguments: '{"w":1}', catalogRevision: ahead });
    await new Promise((resolve) => setTimeout(resolve, 200));
    await h.scripted!.setScript({
      tools: [
        { name: "echo" },
        { name: "huge", behavior: { kind: "huge", bytes: 1_500_000 } },
        { name: "added" },
      ],
    });
    const reply = await pending;
    revision = (await h.catalog()).revision;
    expect({ status: reply.status, catalogRevision: reply.catalogRevision }).toEqual({
      status: "completed",
      catalogRevision: ahead,
    });
  });
});

describe("a result larger than the bus carries", () => {
  it("fails the call with the connector's reason, once, and keeps the begin/end pair", async () => {
    const callId = h.callId();
    const reply = await h.ok({ callId, tool: "mcp__scripted__huge", arguments: "" });
    // The reason is the catalog's own text; the dispatcher's part is the `tool call error: ` frame.
    const message = reply.error ?? "";
    expect({
      reply,
      frame: /^tool call error: .*\[bus\] max_reply_bytes/.test(message),
      events: phased(await h.endedEvents(callId)),
      serverCalls: (await h.scripted!.calls()).filter((call) => call._meta?.callId === callId).length,
    }).toEqual({
      reply: {
        callId,
        status: "failed",
        server: "scripted",
        tool: "huge",
        hookName: "mcp__scripted__huge",
        output: { success: false, body: errorBody(reply, message) },
        error: message,
        durationMs: reply.durationMs,
        wallTimeMs: reply.wallTimeMs,
        catalogRevision: revision,
      },
      frame: true,
      events: lifecycle(
        { callId, invocation: { server: "scripted", tool: "huge", arguments: null } },
        { status: "failed", durationMs: reply.durationMs, result: { err: message } },
      ),
      serverCalls: 1,
    });
  });
});

describe("after all of it", () => {
  it("still serves calls, and the stream holds exactly one begin and one end per call", async () => {
    const reply = await h.ok({ tool: "mcp__scripted__echo", arguments: '{"still":"alive"}' });
    await h.endedEvents(reply.callId);
    const stored = await eventually("every call's end stored", async () => {
      const events = await h.storedCallEvents();
      const ids = new Set(events.map((event) => event.body.callId));
      return [...ids].every((id) => events.some((e) => e.body.callId === id && e.phase === "end"))
        ? events
        : undefined;
    });
    const phasesById = new Map<string, string[]>();
    for (const event of stored) {
      phasesById.set(event.body.callId, [...(phasesById.get(event.body.callId) ?? []), event.phase]);
    }
    expect({
      status: reply.status,
      calls: phasesById.size > 10,
      malformed: [...phasesById].filter(([, phases]) => phases.join(",") !== "begin,end"),
    }).toEqual({ status: "completed", calls: true, malformed: [] });
  });
});

describe("arguments too large for an event", () => {
  it("says how large they were instead of losing the event", () => {
    expect(argumentsOmittedNote(2_000_000)).toBe(
      "<2000000 bytes of arguments omitted from this event: it must fit the bus's max_payload>",
    );
  });
});

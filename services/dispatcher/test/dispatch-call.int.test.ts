/**
 * `<prefix>.dispatch.call` end to end (docs/reference-behavior.md §12, items 25–28 and 43–50): the
 * catalog as its own process in front of the MCP test server and server-everything, the
 * dispatcher on its own bus, a real NATS in between.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorBody, lifecycle, notRunReply, phased, textBody } from "./support/expect.js";
import { DispatchHarness, eventually, wallTimeHeader } from "./support/harness.js";

const APP_URI = "ui://widget/board.html";
const PNG_1X1 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

let h: DispatchHarness;
let revision: number;
/** The approvals asked for, by callId: what lets each waiting call go on. */
const approvalsAsked = new Map<string, () => void>();

/**
 * Waits until the dispatcher asked to approve `callId`, then gives what approves it. Releasing
 * before the ask arrived would approve nothing, and the call would wait forever.
 */
function approvalAsked(callId: string): Promise<() => void> {
  return eventually(`the approval request of ${callId}`, () => approvalsAsked.get(callId));
}

beforeAll(async () => {
  h = await DispatchHarness.start({
    label: "dispatch",
    script: {
      tools: [
        { name: "echo" },
        { name: "structured", behavior: { kind: "structured", value: { answer: 42 }, text: "forty-two" } },
        { name: "failing", behavior: { kind: "error_result", text: "it broke" } },
        { name: "boom", behavior: { kind: "throw", message: "boom" } },
        { name: "hidden", _meta: { ui: { visibility: ["app"] } } },
        { name: "app", _meta: { ui: { resourceUri: APP_URI } } },
        { name: "image", behavior: { kind: "image", data: PNG_1X1, mimeType: "image/png" } },
        { name: "audio", behavior: { kind: "audio", data: "UklGRg==", mimeType: "audio/wav" } },
        { name: "big", behavior: { kind: "huge", bytes: 30_000 } },
        { name: "reviewed" },
      ],
    },
    toolModes: { reviewed: "prompt" },
    everything: true,
  });
  revision = (await h.catalog()).revision;
  await h.approvals(
    (request) =>
      new Promise((resolve) => {
        approvalsAsked.set(request.callId, () => resolve({ decision: "approved", source: "human" }));
      }),
  );
});
afterAll(async () => h?.close());

describe("arguments", () => {
  it("[25] answers invalid JSON with exactly `err: <parse error>` as the model output, and publishes no events", async () => {
    const before = (await h.scripted!.calls()).length;
    const callId = h.callId();
    const reply = await h.ok({ callId, tool: "mcp__scripted__echo", arguments: '{"a":' });
    expect(reply).toEqual({
      callId,
      status: "invalid_arguments",
      output: { success: false, body: "err: Unexpected end of JSON input" },
      error: "err: Unexpected end of JSON input",
      durationMs: 0,
      wallTimeMs: reply.wallTimeMs,
      catalogRevision: revision,
    });
    // A later call's events arrive after any this call could have published.
    const later = await h.ok({ tool: "mcp__scripted__echo", arguments: "{}" });
    await h.endedEvents(later.callId);
    const stored = await eventually("the later call stored", async () => {
      const events = await h.storedCallEvents();
      return events.some((e) => e.body.callId === later.callId && e.phase === "end") ? events : undefined;
    });
    expect({
      seen: h.eventsOf(callId),
      stored: stored.filter((e) => e.body.callId === callId),
      serverCalls: (await h.scripted!.calls()).length,
    }).toEqual({ seen: [], stored: [], serverCalls: before + 1 });
  });

  it("[26] sends no arguments for blank text and records them as null", async () => {
    const callId = h.callId();
    const reply = await h.ok({
      callId,
      threadId: "thread-26",
      tool: "mcp__scripted__echo",
      arguments: " \n\t",
    });
    const [call] = (await h.scripted!.calls()).slice(-1);
    expect({ reply, call, events: phased(await h.endedEvents(callId)) }).toEqual({
      reply: {
        callId,
        status: "completed",
        server: "scripted",
        tool: "echo",
        hookName: "mcp__scripted__echo",
        output: { success: true, body: textBody(reply, '[{"type":"text","text":"{}"}]') },
        result: { content: [{ type: "text", text: "{}" }] },
        durationMs: reply.durationMs,
        wallTimeMs: reply.wallTimeMs,
        catalogRevision: revision,
      },
      call: {
        at: expect.any(String),
        pid: expect.any(Number),
        tool: "echo",
        _meta: { progressToken: expect.anything(), callId, threadId: "thread-26" },
      },
      events: lifecycle(
        { callId, threadId: "thread-26", invocation: { server: "scripted", tool: "echo", arguments: null } },
        { status: "completed", durationMs: reply.durationMs, result: { ok: reply.result! } },
      ),
    });
  });

  it("[26] refuses arguments that are not an object with the reference's message, server untouched", async () => {
    const before = (await h.scripted!.calls()).length;
    const callId = h.callId();
    const reply = await h.ok({ callId, tool: "mcp__scripted__echo", arguments: "[1]" });
    const message = "MCP tool arguments must be a JSON object, got [1]";
    expect({
      reply,
      events: phased(await h.endedEvents(callId)),
      serverCalls: (await h.scripted!.calls()).length,
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
        { callId, invocation: { server: "scripted", tool: "echo", arguments: [1] } },
        { status: "failed", durationMs: 0, result: { err: message } },
      ),
      serverCalls: before,
    });
  });
});

describe("tools the model may not call", () => {
  it.each([
    {
      name: "a name the catalog does not have",
      tool: "mcp__scripted__missing",
      route: {},
      invocation: { server: "toolbus", tool: "mcp__scripted__missing" },
      message: "MCP tool `mcp__scripted__missing` is not available to the model",
    },
    {
      name: "a tool whose _meta.ui.visibility leaves out the model",
      tool: "mcp__scripted__hidden",
      route: { server: "scripted", tool: "hidden", hookName: "mcp__scripted__hidden" },
      invocation: { server: "scripted", tool: "hidden" },
      message: "MCP tool `scripted/hidden` is not available to the model",
    },
  ])("[19][27] skips $name with a begin and a failed end, and never calls the server", async (row) => {
    const before = (await h.scripted!.calls()).length;
    const callId = h.callId();
    const reply = await h.ok({ callId, tool: row.tool, arguments: '{"x":1}' });
    expect({
      reply,
      events: phased(await h.endedEvents(callId)),
      serverCalls: (await h.scripted!.calls()).length,
    }).toEqual({
      reply: notRunReply(reply, {
        callId,
        status: "skipped",
        ...row.route,
        error: row.message,
        catalogRevision: revision,
      }),
      events: lifecycle(
        { callId, invocation: { ...row.invocation, arguments: { x: 1 } } },
        { status: "failed", durationMs: 0, result: { err: row.message } },
      ),
      serverCalls: before,
    });
  });

  it("resolves a {namespace, name} reference like the flat name", async () => {
    const reply = await h.ok({ tool: { namespace: "mcp__scripted", name: "echo" }, arguments: '{"n":2}' });
    expect({ status: reply.status, result: reply.result }).toEqual({
      status: "completed",
      result: { content: [{ type: "text", text: '{"n":2}' }] },
    });
  });
});

describe("the request _meta", () => {
  it("[28] carries the callId and the threadId to the server", async () => {
    const callId = h.callId();
    await h.ok({
      callId,
      threadId: "thread-28",
      turnId: "turn-1",
      tool: "mcp__scripted__echo",
      arguments: "{}",
    });
    const [call] = (await h.scripted!.calls()).slice(-1);
    expect(call).toEqual({
      at: expect.any(String),
      pid: expect.any(Number),
      tool: "echo",
      arguments: {},
      _meta: { progressToken: expect.anything(), callId, threadId: "thread-28" },
    });
  });

  it("sends no threadId when the call has none", async () => {
    const callId = h.callId();
    await h.ok({ callId, tool: "mcp__scripted__echo", arguments: "{}" });
    const [call] = (await h.scripted!.calls()).slice(-1);
    expect(call?._meta).toEqual({ progressToken: expect.anything(), callId });
  });
});

describe("items and events", () => {
  it("[43] folds a thread's calls into items with their final status, via dispatch.history", async () => {
    const thread = "thread-43";
    const ok = await h.ok({ threadId: thread, tool: "mcp__scripted__echo", arguments: '{"q":"a"}' });
    const failing = await h.ok({ threadId: thread, tool: "mcp__scripted__failing", arguments: "" });
    const boom = await h.ok({ threadId: thread, tool: "mcp__scripted__boom", arguments: "" });
    await h.endedEvents(boom.callId);
    const history = await eventually("three finished items", async () => {
      const envelope = await h.history(thread);
      return envelope.ok && envelope.result.items.every((i) => i.status !== "inProgress")
        ? envelope
        : undefined;
    });
    const boomError = "tool call error: tool call failed for `scripted/boom`: MCP error -32603: boom";
    expect({ statuses: [ok.status, failing.status, boom.status], history }).toEqual({
      statuses: ["completed", "failed", "failed"],
      history: {
        ok: true,
        result: {
          items: [
            {
              id: ok.callId,
              server: "scripted",
              tool: "echo",
              arguments: { q: "a" },
              status: "completed",
              result: { content: [{ type: "text", text: '{"q":"a"}' }] },
              durationMs: ok.durationMs,
            },
            {
              id: failing.callId,
              server: "scripted",
              tool: "failing",
              arguments: null,
              status: "failed",
              result: { content: [{ type: "text", text: "it broke" }], isError: true },
              durationMs: failing.durationMs,
            },
            {
              id: boom.callId,
              server: "scripted",
              tool: "boom",
              arguments: null,
              status: "failed",
              error: { message: boomError },
              durationMs: boom.durationMs,
            },
          ],
        },
      },
    });
    expect(boom.error).toBe(boomError);
  });

  it("[43] shows a call waiting for approval as in progress, then completed", async () => {
    const thread = "thread-43-wait";
    const callId = h.callId();
    const pending = h.ok({ callId, threadId: thread, tool: "mcp__scripted__reviewed", arguments: '{"r":1}' });
    const item = { id: callId, server: "scripted", tool: "reviewed", arguments: { r: 1 } };
    const waiting = await eventually("the begun call in the history", async () => {
      const envelope = await h.history(thread);
      return envelope.ok && envelope.result.items.length > 0 ? envelope.result.items : undefined;
    });
    (await approvalAsked(callId))();
    const reply = await pending;
    await h.endedEvents(callId);
    const finished = await h.history(thread);
    expect({ waiting, finished }).toEqual({
      waiting: [{ ...item, status: "inProgress" }],
      finished: {
        ok: true,
        result: {
          items: [{ ...item, status: "completed", result: reply.result, durationMs: reply.durationMs }],
        },
      },
    });
  });

  it("answers an empty history for a thread without calls, and bad_request without a threadId", async () => {
    const raw = await h.nc.request(`${h.prefix}.dispatch.history`, "{}", { timeout: 5_000 });
    expect({ empty: await h.history("thread-none"), missing: raw.json() }).toEqual({
      empty: { ok: true, result: { items: [] } },
      missing: {
        ok: false,
        error: {
          code: "bad_request",
          message: "threadId: Invalid input: expected string, received undefined",
          retryable: false,
        },
      },
    });
  });

  it("[44 differs] publishes {ok} for a result and {err} for an error, with no app identity fields", async () => {
    const done = await h.ok({ tool: "mcp__scripted__echo", arguments: '{"k":"v"}' });
    const boom = await h.ok({ tool: "mcp__scripted__boom", arguments: "{}" });
    expect({
      done: phased(await h.endedEvents(done.callId)),
      boom: phased(await h.endedEvents(boom.callId)),
    }).toEqual({
      done: lifecycle(
        { callId: done.callId, invocation: { server: "scripted", tool: "echo", arguments: { k: "v" } } },
        {
          status: "completed",
          durationMs: done.durationMs,
          result: { ok: { content: [{ type: "text", text: '{"k":"v"}' }] } },
        },
      ),
      boom: lifecycle(
        { callId: boom.callId, invocation: { server: "scripted", tool: "boom", arguments: {} } },
        { status: "failed", durationMs: boom.durationMs, result: { err: boom.error! } },
      ),
    });
  });

  it("names the tool's MCP Apps resource on both events", async () => {
    const reply = await h.ok({ tool: "mcp__scripted__app", arguments: "{}" });
    const events = phased(await h.endedEvents(reply.callId));
    expect(events.map((event) => event.body.mcpAppResourceUri)).toEqual([APP_URI, APP_URI]);
  });

  it("marks events of a read-only tool with readOnlyHint (server-everything's echo)", async () => {
    const reply = await h.ok({ tool: "mcp__everything__echo", arguments: '{"message":"hi"}' });
    expect({ reply, events: phased(await h.endedEvents(reply.callId)) }).toEqual({
      reply: {
        callId: reply.callId,
        status: "completed",
        server: "everything",
        tool: "echo",
        hookName: "mcp__everything__echo",
        output: { success: true, body: textBody(reply, '[{"type":"text","text":"Echo: hi"}]') },
        result: { content: [{ type: "text", text: "Echo: hi" }] },
        durationMs: reply.durationMs,
        wallTimeMs: reply.wallTimeMs,
        catalogRevision: revision,
      },
      events: lifecycle(
        {
          callId: reply.callId,
          invocation: { server: "everything", tool: "echo", arguments: { message: "hi" } },
          readOnlyHint: true,
        },
        { status: "completed", durationMs: reply.durationMs, result: { ok: reply.result! } },
      ),
    });
  });
});

describe("the model's output", () => {
  it("[46] counts the approval wait in the wall time but not in the duration", async () => {
    const callId = h.callId();
    const pending = h.ok({ callId, tool: "mcp__scripted__reviewed", arguments: '{"w":1}' });
    // Held 500 ms from the ask, not from the send (which a loaded machine can delay): the wall
    // time then holds at least that, whatever else the call took.
    const approve = await approvalAsked(callId);
    await new Promise((resolve) => setTimeout(resolve, 500));
    approve();
    const reply = await pending;
    expect({
      body: reply.output.body,
      waitedForApproval: reply.wallTimeMs >= 400,
      durationExcludesWait: reply.durationMs < reply.wallTimeMs - 300,
    }).toEqual({
      body: `${wallTimeHeader(reply.wallTimeMs)}\n[{"type":"text","text":"{\\"w\\":1}"}]`,
      waitedForApproval: true,
      durationExcludesWait: true,
    });
    expect(reply.output.body).toMatch(/^Wall time: \d+\.\d{4} seconds\nOutput:\n/);
  });

  it.each([
    {
      name: "only the structuredContent JSON when there is one",
      tool: "mcp__scripted__structured",
      body: '{"answer":42}',
      result: { content: [{ type: "text", text: "forty-two" }], structuredContent: { answer: 42 } },
    },
    {
      name: "the JSON array of the blocks for text-only content",
      tool: "mcp__scripted__echo",
      body: '[{"type":"text","text":"{\\"t\\":true}"}]',
      result: { content: [{ type: "text", text: '{"t":true}' }] },
    },
  ])("[47] gives the model $name, and the caller the raw result", async (row) => {
    const reply = await h.ok({ tool: row.tool, arguments: '{"t":true}' });
    expect({ output: reply.output, result: reply.result }).toEqual({
      output: { success: true, body: textBody(reply, row.body) },
      result: row.result,
    });
  });

  it("[48] gives a model that takes images content items with a data URL", async () => {
    const reply = await h.ok({ tool: "mcp__scripted__image", arguments: "" });
    expect(reply.output).toEqual({
      success: true,
      body: [
        { type: "input_text", text: wallTimeHeader(reply.wallTimeMs) },
        { type: "input_image", imageUrl: `data:image/png;base64,${PNG_1X1}`, detail: "high" },
      ],
    });
  });

  it("[48] gives a model without image input the placeholder, and keeps the image in the raw result", async () => {
    const reply = await h.ok({ tool: "mcp__scripted__image", arguments: "", model: { images: false } });
    expect({ output: reply.output, result: reply.result }).toEqual({
      output: {
        success: true,
        body: textBody(
          reply,
          '[{"type":"text","text":"<image content omitted because you do not support image input>"}]',
        ),
      },
      result: { content: [{ type: "image", data: PNG_1X1, mimeType: "image/png" }] },
    });
  });

  it("replaces audio for a model that does not say it takes audio", async () => {
    const [without, withAudio] = await Promise.all([
      h.ok({ tool: "mcp__scripted__audio", arguments: "" }),
      h.ok({ tool: "mcp__scripted__audio", arguments: "", model: { audio: true } }),
    ]);
    expect({ without: without.output, withAudio: withAudio.output }).toEqual({
      without: {
        success: true,
        body: textBody(
          without,
          '[{"type":"text","text":"<audio content omitted because you do not support audio input>"}]',
        ),
      },
      withAudio: {
        success: true,
        body: [
          { type: "input_text", text: wallTimeHeader(withAudio.wallTimeMs) },
          { type: "input_audio", data: "data:audio/wav;base64,UklGRg==" },
        ],
      },
    });
  });

  it("[48] keeps server-everything's text and image blocks in order as content items", async () => {
    const reply = await h.ok({ tool: "mcp__everything__get_tiny_image", arguments: "" });
    const image = reply.result?.content.find((block) => block.type === "image") as
      | { data: string; mimeType: string }
      | undefined;
    expect(reply.output).toEqual({
      success: true,
      body: [
        { type: "input_text", text: wallTimeHeader(reply.wallTimeMs) },
        { type: "input_text", text: "Here's the image you requested:" },
        { type: "input_image", imageUrl: `data:${image?.mimeType};base64,${image?.data}`, detail: "high" },
        { type: "input_text", text: "The image above is the MCP logo." },
      ],
    });
  });

  it.each([
    {
      mode: "bytes" as const,
      limit: 10_000,
      marker: (removedBytes: number) => `…${removedBytes} chars truncated…`,
    },
    {
      mode: "tokens" as const,
      limit: 1_000,
      marker: (removedBytes: number) => `…${Math.ceil(removedBytes / 4)} tokens truncated…`,
    },
  ])(
    "[49] middle-truncates a big output to policy × 1.2 in $mode mode, the raw result whole",
    async ({ mode, limit, marker }) => {
      const reply = await h.ok({
        tool: "mcp__scripted__big",
        arguments: "",
        model: { truncation: { mode, limit } },
      });
      const full = textBody(reply, JSON.stringify(reply.result?.content));
      const budget = Math.ceil(limit * 1.2) * (mode === "tokens" ? 4 : 1);
      const head = Math.floor(budget / 2);
      expect({ output: reply.output, rawText: reply.result?.content[0] }).toEqual({
        output: {
          success: true,
          body:
            full.slice(0, head) + marker(full.length - budget) + full.slice(full.length - (budget - head)),
        },
        rawText: { type: "text", text: "x".repeat(30_000) },
      });
    },
  );

  it("[49] reports success false exactly when the result has isError", async () => {
    const [failing, fine] = await Promise.all([
      h.ok({ tool: "mcp__scripted__failing", arguments: "" }),
      h.ok({ tool: "mcp__scripted__echo", arguments: "" }),
    ]);
    expect({ failing: failing.output, fine: fine.output.success }).toEqual({
      failing: { success: false, body: errorBody(failing, "it broke") },
      fine: true,
    });
  });
});

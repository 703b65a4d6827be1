// The connector's raw calls against real servers: the result untouched, request _meta, the
// revision barrier, the tool timeout (checklist 28–30), relays of progress, log messages and
// elicitations (a tool_suggestion declined, checklist 62), a crashing server's restart, and a 50 MB result.

import { Kvm } from "@nats-io/kv";
import { CALL_HOLD_MS, internalSubjects } from "@toolbus/protocol";
import {
  type HttpTestServer,
  type StdioTestServer,
  startTestServer,
  type TestServerScript,
} from "@toolbus/testkit/mcp-test-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CatalogHarness,
  type Envelope,
  eventually,
  type RunningService,
  toolbusToml,
} from "./support/harness.js";

const FIFTY_MB = 50_000_000;

const script: TestServerScript = {
  tools: [
    { name: "echo" },
    { name: "shape", behavior: { kind: "structured", value: { n: 1 } } },
    { name: "failing", behavior: { kind: "error_result", text: "no such record" } },
    { name: "boom", behavior: { kind: "throw", message: "kaboom" } },
    { name: "slow", behavior: { kind: "delay", ms: 5_000 } },
    { name: "work", behavior: { kind: "progress", count: 3, intervalMs: 5 } },
    { name: "note", behavior: { kind: "log", level: "warning", data: { disk: "low" }, text: "noted" } },
    { name: "ask", behavior: { kind: "elicit", message: "Pick a colour" } },
    {
      name: "suggest",
      behavior: {
        kind: "elicit",
        message: "Install the linter tool?",
        _meta: { codex_approval_kind: "tool_suggestion" },
      },
    },
    { name: "huge", behavior: { kind: "huge", bytes: FIFTY_MB } },
    { name: "crash", behavior: { kind: "crash" } },
  ],
};

let harness: CatalogHarness;
let running: RunningService;
let srv: StdioTestServer;
let timed: StdioTestServer;
let fragile: StdioTestServer;
let web: HttpTestServer;

beforeAll(async () => {
  harness = await CatalogHarness.create("calls");
  srv = await startTestServer({ transport: "stdio", script });
  timed = await startTestServer({ transport: "stdio", script });
  fragile = await startTestServer({ transport: "stdio", script });
  web = await startTestServer({ transport: "http", script });
  for (const server of [srv, timed, fragile, web]) harness.defer(() => server.dispose());
  running = await harness.start(
    toolbusToml({
      servers: {
        srv: { command: srv.command, args: srv.args },
        timed: { command: timed.command, args: timed.args, tool_timeout_sec: 0.5 },
        fragile: { command: fragile.command, args: fragile.args },
        web: { url: web.url },
        gone: { command: "/nonexistent/toolbus-test-command" },
      },
    }) +
      // The smallest reply cap there is, so the 50 MB result stays over it without a large buffer.
      "\n[bus]\nmax_reply_bytes = 1048576\n",
  );
  expect(await running.service.startup).toEqual({
    ready: ["fragile", "srv", "timed", "web"],
    failed: [{ server: "gone", error: "spawn /nonexistent/toolbus-test-command ENOENT" }],
    cancelled: [],
  });
}, 90_000);
afterAll(async () => {
  await harness?.close();
});

async function revisionOf(server: string): Promise<number> {
  return (await harness.entry(server))!.revision;
}

async function call(server: string, body: Record<string, unknown>, timeoutMs?: number): Promise<Envelope> {
  return harness.request(
    harness.subjects.connectorCall(server),
    { preparedRevision: await revisionOf(server), ...body },
    timeoutMs,
  );
}

const failure = (code: string, message: string, retryable: boolean) => ({
  ok: false,
  error: { code, message, retryable },
});

describe("connector calls", () => {
  it("[28] returns the server's result untouched, with callId and threadId set over the caller's _meta", async () => {
    const reply = await call("srv", {
      callId: "call-meta",
      threadId: "thread-1",
      tool: "shape",
      arguments: { a: 1 },
      meta: { threadId: "stale-thread", traceTag: "x" },
    });
    expect(reply).toEqual({
      ok: true,
      result: { result: { content: [{ type: "text", text: '{"n":1}' }], structuredContent: { n: 1 } } },
    });
    expect((await srv.calls()).at(-1)).toEqual({
      at: expect.any(String),
      pid: expect.any(Number),
      tool: "shape",
      arguments: { a: 1 },
      _meta: { traceTag: "x", threadId: "thread-1", callId: "call-meta", progressToken: expect.any(String) },
    });
  });

  it("runs a call once, answering its repeat from the record it keeps under its own server", async () => {
    const body = { callId: "call-once", tool: "echo", arguments: { n: 1 } };
    const first = await call("srv", body);
    const before = (await srv.calls()).filter((line) => line._meta?.callId === "call-once");
    expect(await call("srv", body)).toEqual(first);
    expect((await srv.calls()).filter((line) => line._meta?.callId === "call-once")).toEqual(before);
    expect(before).toHaveLength(1);
    // Under `srv.`, the only keys srv's connector identity may write in the executions bucket.
    const executions = await new Kvm(harness.nc).open(internalSubjects(harness.prefix).kv.executions);
    const keys: string[] = [];
    for await (const key of await executions.keys()) keys.push(key);
    expect(keys).toContain("srv.call-once");
    expect(keys.filter((key) => !/^(srv|timed|fragile|web)\./.test(key))).toEqual([]);
  });

  it("passes an error result through as a result, and names the tool when the server fails the request", async () => {
    expect(await call("srv", { callId: "call-failing", tool: "failing" })).toEqual({
      ok: true,
      result: { result: { content: [{ type: "text", text: "no such record" }], isError: true } },
    });
    expect(await call("srv", { callId: "call-boom", tool: "boom" })).toEqual(
      failure("transport_error", "tool call failed for `srv/boom`: MCP error -32603: kaboom", true),
    );
  });

  it("[29] refuses a call prepared against another revision of the server, which never sees it", async () => {
    const prepared = await revisionOf("srv");
    const before = (await srv.calls()).length;
    const stale = failure(
      "stale_revision",
      "tool call rejected because the catalog changed after `srv/echo` was prepared",
      false,
    );
    expect(await call("srv", { callId: "call-old", tool: "echo", preparedRevision: prepared - 1 })).toEqual(
      stale,
    );

    // The catalog moves on after the dispatcher prepared the call.
    await srv.setScript({ tools: [...(script.tools ?? []), { name: "later" }] });
    await eventually("the new revision", async () =>
      (await revisionOf("srv")) > prepared ? true : undefined,
    );
    expect(await call("srv", { callId: "call-moved", tool: "echo", preparedRevision: prepared })).toEqual(
      stale,
    );
    expect((await srv.calls()).length).toBe(before);
  });

  it("holds a call prepared against a revision the barrier has not learnt yet until it has, or refuses it after a bounded wait", async () => {
    // The dispatcher can see a write in the bucket before this connector does (the ack of its own
    // write and its watch both travel separately): such a call is not stale, only early.
    const ahead = (await harness.revision()) + 1;
    const early = call("srv", {
      callId: "call-early",
      tool: "echo",
      arguments: { a: 1 },
      preparedRevision: ahead,
    });
    await srv.setScript({ tools: [...(script.tools ?? []), { name: "later" }, { name: "sooner" }] });
    const never = await call("srv", { callId: "call-never", tool: "echo", preparedRevision: ahead + 1_000 });
    expect({
      early: await early,
      revision: await revisionOf("srv"),
      never,
      neverReachedServer: (await srv.calls()).some((line) => line._meta?.callId === "call-never"),
    }).toEqual({
      early: { ok: true, result: { result: { content: [{ type: "text", text: '{"a":1}' }] } } },
      revision: ahead,
      never: failure(
        "stale_revision",
        "tool call rejected because the catalog changed after `srv/echo` was prepared",
        false,
      ),
      neverReachedServer: false,
    });
  });

  it("[30] times a slow tool out after the server's tool timeout, or the caller's when it is shorter", async () => {
    expect(await call("timed", { callId: "call-slow-1", tool: "slow" })).toEqual(
      failure(
        "timeout",
        "tool call failed for `timed/slow`: timed out awaiting tools/call after 500ms",
        true,
      ),
    );
    expect(await call("srv", { callId: "call-slow-2", tool: "slow", timeoutMs: 200 })).toEqual(
      failure("timeout", "tool call failed for `srv/slow`: timed out awaiting tools/call after 200ms", true),
    );
  });

  it("answers a call to a server that is not running with server_not_ready", async () => {
    expect(await call("gone", { callId: "call-gone", tool: "echo" })).toEqual(
      failure("server_not_ready", "MCP server 'gone' is not connected", true),
    );
  });

  it("relays the server's progress to the caller's progress subject", async () => {
    const progress = harness.collect(harness.subjects.callRelay("call-progress", "srv", "progress"));
    await harness.nc.flush();
    expect(await call("srv", { callId: "call-progress", tool: "work" })).toEqual({
      ok: true,
      result: { result: { content: [{ type: "text", text: "done" }] } },
    });
    await eventually("three progress messages", () => (progress.length === 3 ? true : undefined));
    expect(progress).toEqual(
      [1, 2, 3].map((step) => ({
        callId: "call-progress",
        server: "srv",
        progress: step,
        total: 3,
        message: `step ${step} of 3`,
      })),
    );
  });

  it("relays a log message sent during a call", async () => {
    const logged = harness.collect(harness.subjects.callRelay("call-log", "srv", "logging"));
    await harness.nc.flush();
    expect(await call("srv", { callId: "call-log", tool: "note" })).toEqual({
      ok: true,
      result: { result: { content: [{ type: "text", text: "noted" }] } },
    });
    await eventually("the log message", () => (logged.length === 1 ? true : undefined));
    expect(logged).toEqual([
      {
        callId: "call-log",
        server: "srv",
        level: "warning",
        logger: "mcp-test-server",
        data: { disk: "low" },
      },
    ]);
  });

  it("hands an elicitation to whoever answers on the call's subject, and the answer to the server", async () => {
    const asked: unknown[] = [];
    const answerer = harness.nc.subscribe(harness.subjects.callRelay("call-ask", "srv", "elicitation"), {
      callback: (_error, msg) => {
        asked.push(msg.json());
        msg.respond(JSON.stringify({ ok: true, result: { action: "accept", content: { colour: "red" } } }));
      },
    });
    await harness.nc.flush();
    try {
      expect(await call("srv", { callId: "call-ask", tool: "ask" })).toEqual({
        ok: true,
        result: {
          result: { content: [{ type: "text", text: '{"action":"accept","content":{"colour":"red"}}' }] },
        },
      });
    } finally {
      answerer.unsubscribe();
    }
    expect(asked).toEqual([
      {
        callId: "call-ask",
        server: "srv",
        // Held (contract.md "While a call runs"): one question, sent again under its relayId.
        relayId: expect.any(String),
        holdMs: CALL_HOLD_MS,
        request: {
          mode: "form",
          message: "Pick a colour",
          requestedSchema: { type: "object", properties: {} },
        },
      },
    ]);
  });

  it("[62] declines a tool_suggestion elicitation at once, never asking whoever answers the call", async () => {
    const asked: unknown[] = [];
    const answerer = harness.nc.subscribe(
      harness.subjects.callRelayAnyServer("call-suggest", "elicitation"),
      {
        callback: (_error, msg) => {
          asked.push(msg.json());
          msg.respond(JSON.stringify({ ok: true, result: { action: "accept", content: {} } }));
        },
      },
    );
    await harness.nc.flush();
    try {
      expect(await call("srv", { callId: "call-suggest", tool: "suggest" })).toEqual({
        ok: true,
        result: { result: { content: [{ type: "text", text: '{"action":"decline"}' }] } },
      });
    } finally {
      answerer.unsubscribe();
    }
    expect(asked).toEqual([]);
  });

  it("declines an elicitation for the server when nobody is there to answer", async () => {
    expect(await call("srv", { callId: "call-unanswered", tool: "ask" })).toEqual({
      ok: true,
      result: { result: { content: [{ type: "text", text: '{"action":"decline"}' }] } },
    });
  });

  it("refuses a 50 MB result as payload_too_large without buffering it, and keeps serving", async () => {
    const before = process.memoryUsage().rss;
    const tooLarge = (server: string, size: string) =>
      failure(
        "payload_too_large",
        `tool call failed for \`${server}/huge\`: the tool's result ${size}is larger than 1048576 bytes, ` +
          "the most toolbus reads in one message from an MCP server (the larger of [bus] max_reply_bytes and NATS max_payload); " +
          "ask the tool for less output, or raise [bus] max_reply_bytes",
        false,
      );
    // Over stdio the whole reply is counted (the text plus its JSON-RPC framing); HTTP stops reading.
    const stdioReply = await call("srv", { callId: "call-huge-stdio", tool: "huge" }, 60_000);
    const size = /result of (\d+) bytes/.exec(JSON.stringify(stdioReply))?.[1];
    expect(Number(size) - FIFTY_MB).toBeGreaterThan(0);
    expect(Number(size) - FIFTY_MB).toBeLessThan(100);
    expect(stdioReply).toEqual(tooLarge("srv", `of ${size} bytes `));
    expect(await call("web", { callId: "call-huge-http", tool: "huge" }, 60_000)).toEqual(
      tooLarge("web", ""),
    );
    expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024);

    for (const server of ["srv", "web"]) {
      expect(
        await call(server, { callId: `call-after-huge-${server}`, tool: "echo", arguments: { ok: 1 } }),
      ).toEqual({
        ok: true,
        result: { result: { content: [{ type: "text", text: '{"ok":1}' }] } },
      });
    }
  }, 90_000);

  it("restarts a stdio server that crashed, saying so in its status, and serves it again", async () => {
    const status = harness.subjects.serverStatus("fragile");
    const seen = harness.eventsOn(status).length;
    expect(await call("fragile", { callId: "call-crash", tool: "crash" })).toEqual(
      failure(
        "transport_error",
        "tool call failed for `fragile/crash`: MCP error -32000: Connection closed",
        true,
      ),
    );
    await eventually("the restarted server", () =>
      harness
        .eventsOn(status)
        .slice(seen)
        .some((e) => (e.status as { state: string }).state === "ready")
        ? true
        : undefined,
    );
    expect(harness.eventsOn(status).slice(seen)).toEqual([
      {
        server: "fragile",
        status: {
          state: "failed",
          error:
            "MCP client for `fragile` lost its connection: MCP server connection closed; reconnecting in 500ms (attempt 1)",
        },
        at: expect.any(String),
      },
      { server: "fragile", status: { state: "starting" }, at: expect.any(String) },
      { server: "fragile", status: { state: "ready" }, at: expect.any(String) },
    ]);
    expect((await harness.catalog()).servers.find((s) => s.name === "fragile")).toEqual({
      name: "fragile",
      status: "ready",
      required: false,
      revision: expect.any(Number),
      // What the restarted server said of itself in its initialize answer.
      serverInfo: { name: "toolbus-mcp-test-server", version: expect.any(String) },
    });
    expect(await call("fragile", { callId: "call-after-crash", tool: "echo" })).toEqual({
      ok: true,
      result: { result: { content: [{ type: "text", text: "{}" }] } },
    });
  }, 60_000);
});

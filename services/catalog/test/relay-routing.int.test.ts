// Two clients calling the same server at once: each call's elicitations and log messages reach
// that call's caller (core/call-association.ts), over streamable HTTP by the request they were
// sent in the context of and over stdio by the call's progress token; a request that says
// nothing while two calls run is refused with an error, and nobody is asked.
import type { Msg } from "@nats-io/transport-node";
import { CALL_HOLD_MS } from "@toolbus/protocol";
import {
  type HttpTestServer,
  type StdioTestServer,
  startTestServer,
  type TestServerScript,
} from "@toolbus/testkit/mcp-test-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CatalogHarness, type Envelope, eventually, toolbusToml } from "./support/harness.js";

const script: TestServerScript = {
  tools: [
    { name: "ask", behavior: { kind: "elicit", message: "Pick a colour" } },
    { name: "ask-tagged", behavior: { kind: "elicit", message: "Pick a colour", echoProgressToken: true } },
    { name: "note-a", behavior: { kind: "log", data: { who: "a" }, holdMs: 500 } },
    { name: "note-b", behavior: { kind: "log", data: { who: "b" }, holdMs: 500 } },
    {
      name: "note-a-tagged",
      behavior: { kind: "log", data: { who: "a" }, holdMs: 500, echoProgressToken: true },
    },
    {
      name: "note-b-tagged",
      behavior: { kind: "log", data: { who: "b" }, holdMs: 500, echoProgressToken: true },
    },
    { name: "sample", behavior: { kind: "sample", prompt: "Name a colour", maxTokens: 5 } },
    { name: "hold", behavior: { kind: "delay", ms: 1_500 } },
  ],
};

let harness: CatalogHarness;
let srv: StdioTestServer;
let web: HttpTestServer;

beforeAll(async () => {
  harness = await CatalogHarness.create("relay");
  srv = await startTestServer({ transport: "stdio", script });
  web = await startTestServer({ transport: "http", script });
  for (const server of [srv, web]) harness.defer(() => server.dispose());
  const running = await harness.start(
    toolbusToml({ servers: { srv: { command: srv.command, args: srv.args }, web: { url: web.url } } }),
  );
  expect(await running.service.startup).toEqual({ ready: ["srv", "web"], failed: [], cancelled: [] });
}, 90_000);
afterAll(async () => {
  await harness?.close();
});

async function call(server: string, callId: string, tool: string): Promise<Envelope> {
  const preparedRevision = (await harness.entry(server))!.revision;
  // The caller's timeout bounds a call whose elicitation went astray.
  return harness.request(
    harness.subjects.connectorCall(server),
    { callId, tool, preparedRevision, timeoutMs: 8_000 },
    15_000,
  );
}

/**
 * Answers the elicitations (or sampling requests) on each call's subject, with the call's own
 * colour, but only once every call has been asked: both calls are then surely running at once.
 */
async function answerOnceAllAsked(callIds: string[], kind: "elicitation" | "sampling" = "elicitation") {
  const answer = (colour: string) =>
    kind === "elicitation"
      ? { action: "accept", content: { colour } }
      : { role: "assistant", content: { type: "text", text: colour }, model: "test-model" };
  const asked = new Map<string, unknown[]>(callIds.map((id) => [id, []]));
  const waiting: Array<{ callId: string; msg: Msg }> = [];
  const subscriptions = callIds.map((callId) =>
    harness.nc.subscribe(harness.subjects.callRelayAnyServer(callId, kind), {
      callback: (_error, msg) => {
        asked.get(callId)!.push(msg.json());
        waiting.push({ callId, msg });
        if ([...asked.values()].every((requests) => requests.length > 0)) {
          for (const { callId: id, msg: m } of waiting.splice(0)) {
            m.respond(JSON.stringify({ ok: true, result: answer(id) }));
          }
        }
      },
    }),
  );
  await harness.nc.flush();
  return {
    asked,
    stop: () => {
      for (const subscription of subscriptions) subscription.unsubscribe();
    },
  };
}

const accepted = (colour: string) => ({
  ok: true,
  result: {
    result: { content: [{ type: "text", text: JSON.stringify({ action: "accept", content: { colour } }) }] },
  },
});

describe("server requests during concurrent calls", () => {
  it.each([
    ["streamable HTTP, by the request it was sent for", "web", "ask"],
    ["stdio, by the call's progress token", "srv", "ask-tagged"],
  ])("gives each of two callers of one server its own elicitation (%s)", async (_how, server, tool) => {
    const ids = [`${server}-first`, `${server}-second`];
    const answerer = await answerOnceAllAsked(ids);
    try {
      const results = await Promise.all(ids.map((id) => call(server, id, tool)));
      expect(results).toEqual(ids.map(accepted));
    } finally {
      answerer.stop();
    }
    expect(Object.fromEntries(answerer.asked)).toEqual(
      Object.fromEntries(
        ids.map((id) => [
          id,
          [
            {
              callId: id,
              server,
              // Held (contract.md "While a call runs"): one question, sent again under its relayId.
              relayId: expect.any(String),
              holdMs: CALL_HOLD_MS,
              request: {
                mode: "form",
                message: "Pick a colour",
                requestedSchema: { type: "object", properties: {} },
                ...(tool === "ask-tagged" ? { _meta: { progressToken: expect.any(String) } } : {}),
              },
            },
          ],
        ]),
      ),
    );
  });

  it("gives each of two callers of one server its own sampling request (streamable HTTP)", async () => {
    const ids = ["web-sample-first", "web-sample-second"];
    const answerer = await answerOnceAllAsked(ids, "sampling");
    try {
      const results = await Promise.all(ids.map((id) => call("web", id, "sample")));
      expect(results).toEqual(
        ids.map((id) => ({ ok: true, result: { result: { content: [{ type: "text", text: id }] } } })),
      );
    } finally {
      answerer.stop();
    }
    expect(
      [...answerer.asked.entries()].map(([id, asked]) => [
        id,
        asked.map((a) => (a as { callId: string }).callId),
      ]),
    ).toEqual(ids.map((id) => [id, [id]]));
  });

  it.each([
    ["streamable HTTP, by the request it was sent for", "web", ""],
    ["stdio, by the call's progress token", "srv", "-tagged"],
  ])("gives each of two callers of one server its own log messages (%s)", async (_how, server, suffix) => {
    const [a, b] = [`${server}-log-a`, `${server}-log-b`];
    const logged = { [a]: harness.collect(harness.subjects.callRelay(a, server, "logging")) };
    logged[b] = harness.collect(harness.subjects.callRelay(b, server, "logging"));
    await harness.nc.flush();
    const results = await Promise.all([
      call(server, a, `note-a${suffix}`),
      call(server, b, `note-b${suffix}`),
    ]);
    expect(results.map((r) => r.ok)).toEqual([true, true]);
    await eventually("both log messages", () =>
      logged[a]!.length + logged[b]!.length >= 2 ? true : undefined,
    );
    const relayed = (callId: string, who: string) => [
      { callId, server, level: "info", logger: "mcp-test-server", data: { who } },
    ];
    expect(logged).toEqual({ [a]: relayed(a, "a"), [b]: relayed(b, "b") });
  });

  it("refuses, with an error saying why, an elicitation that does not say which of two running calls it is for", async () => {
    const anyElicitation = harness.collect(harness.subjects.callRelayEvery("elicitation"));
    await harness.nc.flush();
    const holding = call("srv", "srv-holding", "hold");
    await eventually("the server running the first call", async () =>
      (await srv.calls()).some((line) => line.tool === "hold" && line._meta?.callId === "srv-holding")
        ? true
        : undefined,
    );
    expect(await call("srv", "srv-untagged", "ask")).toEqual({
      ok: true,
      result: {
        result: {
          content: [
            {
              type: "text",
              text:
                "MCP error -32600: toolbus relays elicitation/create only to the MCP client that made the tool call it belongs to; " +
                "2 of this server's tool calls are running and it does not say which one it belongs to " +
                "(send it in the context of its tools/call request, or with that call's progressToken in its _meta)",
            },
          ],
          isError: true,
        },
      },
    });
    expect((await holding).ok).toBe(true);
    expect(anyElicitation).toEqual([]);
  });
});

/**
 * `GET /v1/events` on a gateway: a REST call's begin and end as they happen, kinds filtering,
 * approvals events relayed and contract breakers dropped, and open streams ended when the
 * gateway stops. Real NATS, the real catalog and dispatcher (child processes) behind it.
 */
import { randomUUID } from "node:crypto";
import type { ApprovalRequest, CallEndEvent } from "@toolbus/protocol";
import { type StdioTestServer, startTestServer } from "@toolbus/testkit/mcp-test-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayService } from "../src/gateway-service.js";
import { readSse, type SseEvent } from "./support/sse-events.js";
import { Stack, tomlFor } from "./support/stack.js";

let stack: Stack;
let alpha: StdioTestServer;
let gateway: GatewayService;

beforeAll(async () => {
  alpha = await startTestServer({
    transport: "stdio",
    script: {
      tools: [
        { name: "get-thing", behavior: { kind: "text", text: "thing" } },
        { name: "boom", behavior: { kind: "error_result", text: "it broke" } },
      ],
    },
  });
  stack = await Stack.start("gw_sse", tomlFor([{ name: "alpha", command: alpha.command, args: alpha.args }]));
  stack.defer(() => alpha.dispose());
  gateway = await stack.gateway();
}, 90_000);

afterAll(async () => {
  await stack?.close();
});

async function openEvents(url: string, query = "") {
  const response = await fetch(`${url}/v1/events${query}`, { headers: { accept: "text/event-stream" } });
  expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
  const events = readSse(response);
  const first = await events.next();
  return { events, first };
}

function call(tool: string, callId = `sse-${randomUUID()}`) {
  const reply = fetch(`${gateway.url}/v1/calls`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ callId, tool, arguments: '{"x":1}' }),
  }).then((response) => response.json());
  return { callId, reply };
}

const ofCall = (callId: string) => (event: SseEvent) => (event.data as { callId?: string }).callId === callId;

describe("GET /v1/events", () => {
  it("says which kinds it sends once it is subscribed", async () => {
    const { events, first } = await openEvents(gateway.url);
    events.cancel();
    expect(first).toEqual({
      event: "subscribed",
      data: {
        kinds: [
          "call.begin",
          "call.end",
          "server.status",
          "startup_complete",
          "catalog",
          "approvals.pending",
          "approvals.resolved",
        ],
      },
    });
  });

  it("streams a REST call's begin and then its end, with status and duration", async () => {
    const { events } = await openEvents(gateway.url);
    const { callId, reply } = call("mcp__alpha__get_thing");
    const seen = (await events.until((event) => event.event === "call.end" && ofCall(callId)(event))).filter(
      ofCall(callId),
    );
    events.cancel();
    await reply;
    const begin = {
      callId,
      invocation: { server: "alpha", tool: "get-thing", arguments: { x: 1 } },
      at: expect.any(String),
    };
    expect(seen).toEqual([
      { event: "call.begin", data: begin },
      {
        event: "call.end",
        data: {
          ...begin,
          status: "completed",
          durationMs: expect.any(Number),
          result: { ok: { content: [{ type: "text", text: "thing" }] } },
        },
      },
    ]);
  });

  it("sends only the kinds asked for", async () => {
    const { events, first } = await openEvents(gateway.url, "?kinds=call.end");
    const { callId, reply } = call("mcp__alpha__boom");
    const next = await events.next();
    events.cancel();
    await reply;
    expect({ first, next: { event: next.event, callId: (next.data as CallEndEvent).callId } }).toEqual({
      first: { event: "subscribed", data: { kinds: ["call.end"] } },
      next: { event: "call.end", callId },
    });
  });

  it("refuses an unknown kind with 400 naming the parameter", async () => {
    const response = await fetch(`${gateway.url}/v1/events?kinds=call.end,call.middle`);
    expect({ status: response.status, body: await response.json() }).toEqual({
      status: 400,
      body: {
        error: {
          code: "bad_request",
          message:
            'kinds: unknown event kind(s) "call.middle"; use a comma-separated list of call.begin, call.end, server.status, startup_complete, catalog, approvals.pending, approvals.resolved',
          retryable: false,
        },
      },
    });
  });

  it("relays approvals events and drops a message that breaks the contract", async () => {
    const { events } = await openEvents(gateway.url, "?kinds=approvals.pending,approvals.resolved");
    const pending = approvalRequest("appr-1");
    stack.nc.publish(stack.subjects.approvalsPending, JSON.stringify({ requestId: "broken" }));
    stack.nc.publish(stack.subjects.approvalsPending, JSON.stringify(pending));
    const resolved = { requestId: pending.requestId, callId: "appr-1", decision: "approved", by: "user" };
    stack.nc.publish(stack.subjects.approvalsResolved, JSON.stringify(resolved));
    const seen = [await events.next(), await events.next()];
    events.cancel();
    expect(seen).toEqual([
      { event: "approvals.pending", data: pending },
      { event: "approvals.resolved", data: resolved },
    ]);
  });

  it("ends open streams when the gateway stops, and the stop does not wait for them", async () => {
    const doomed = await stack.gateway();
    const { events } = await openEvents(doomed.url);
    await doomed.stop();
    // A clean end, not a clock: a stream the stop left open would be cut after the stop's grace,
    // and a cut connection makes the read fail with another error (fetch's "terminated").
    await expect(events.next()).rejects.toThrow("the SSE stream ended");
  });
});

describe("GET /v1/events by principal", () => {
  it("shows a caller its own calls only; an approver and an admin every call", async () => {
    const principals = [
      { name: "bob", role: "caller" as const, token: "bob-token" },
      { name: "carol", role: "caller" as const, token: "carol-token" },
      { name: "alice", role: "approver" as const, token: "alice-token" },
      { name: "root", role: "admin" as const, token: "root-token" },
    ];
    const shared = await stack.gateway({ principals });
    const watch = async (token: string) => {
      const response = await fetch(`${shared.url}/v1/events?kinds=call.begin,call.end`, {
        headers: { accept: "text/event-stream", authorization: `Bearer ${token}` },
      });
      const events = readSse(response);
      await events.next();
      return events;
    };
    const [bob, carol, alice, root] = await Promise.all([
      watch("bob-token"),
      watch("carol-token"),
      watch("alice-token"),
      watch("root-token"),
    ]);
    const callAs = (token: string, callId: string) =>
      fetch(`${shared.url}/v1/calls`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify({ callId, tool: "mcp__alpha__get-thing", arguments: '{"x":1}' }),
      }).then((response) => response.json());
    const bobs = `bob-${randomUUID()}`;
    const carols = `carol-${randomUUID()}`;
    await callAs("bob-token", bobs);
    await callAs("carol-token", carols);
    // Each stream is read up to carol's call's end, which comes last: what came before is what it saw.
    const seen = async (events: Awaited<ReturnType<typeof watch>>, last: string) =>
      (await events.until((event) => event.event === "call.end" && ofCall(last)(event))).map(
        (event) => `${event.event} ${(event.data as { callId: string; requestedBy?: string }).requestedBy}`,
      );
    const [bobSaw, carolSaw, aliceSaw, rootSaw] = await Promise.all([
      // bob sees no event of carol's: his stream is read to his own call's end.
      seen(bob, bobs),
      seen(carol, carols),
      seen(alice, carols),
      seen(root, carols),
    ]);
    const every = ["call.begin bob", "call.end bob", "call.begin carol", "call.end carol"];
    expect({ bobSaw, carolSaw, aliceSaw, rootSaw }).toEqual({
      bobSaw: ["call.begin bob", "call.end bob"],
      carolSaw: ["call.begin carol", "call.end carol"],
      aliceSaw: every,
      rootSaw: every,
    });
    // And after his own, bob's stream holds nothing of carol's.
    await expect(bob.next(500)).rejects.toThrow("no ");
    for (const events of [bob, carol, alice, root]) events.cancel();
  });
});

function approvalRequest(callId: string): ApprovalRequest {
  return {
    requestId: `mcp_tool_call_approval_${callId}`,
    callId,
    server: "alpha",
    tool: "get-thing",
    hookName: "mcp__alpha__get-thing",
    header: "Approve app tool call?",
    question: 'Allow the alpha MCP server to run tool "get-thing"?',
    options: [{ id: "allow", label: "Allow", description: "Run the tool and continue." }],
    arguments: { x: 1 },
    createdAt: new Date().toISOString(),
    expiresAt: new Date(Date.now() + 60_000).toISOString(),
  };
}

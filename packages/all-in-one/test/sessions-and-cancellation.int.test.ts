/**
 * Threads and cancellation through the edge, every service real (gateway, dispatcher, approvals
 * with Postgres, catalog, the scripted MCP test server over stdio), driven by the MCP SDK client
 * over streamable HTTP and by plain HTTP for the REST API.
 *
 * Threads (checklist 28, 36 and 39): a tools/call belongs to the MCP session, or to the thread the
 * client names in `_meta.threadId`; the server receives it as `_meta.threadId`; "Allow for this
 * session" is offered and honoured within the session, and ends with it; another principal
 * naming the thread (over MCP or REST) is refused, so its grants never cross tokens.
 *
 * Cancellation (checklist 38): a client's notifications/cancelled, a dropped request or
 * `DELETE /v1/calls/{callId}` stops the call end to end: a pending approval is withdrawn, a
 * running tool's server is sent notifications/cancelled, the end event says the call was
 * cancelled, and the call ledger keeps that ending (the same callId is answered, not run again).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  type ElicitRequest,
  ElicitRequestSchema,
  type ElicitResult,
} from "@modelcontextprotocol/sdk/types.js";
import {
  type ApprovalRequest,
  ApprovalRequestSchema,
  type ApprovalResolvedEvent,
  ApprovalResolvedEventSchema,
  type CallEndEvent,
  CallEndEventSchema,
  type ToolCallReply,
} from "@toolbus/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Services, startServices, waitFor } from "./support/services.js";

const TOKENS = { bob: "bob-calls", carol: "carol-calls" };
let s: Services;
const ends: CallEndEvent[] = [];
const pending: ApprovalRequest[] = [];
const resolved: ApprovalResolvedEvent[] = [];
const clients: Client[] = [];

beforeAll(async () => {
  s = await startServices({
    label: "sessions_cancel",
    script: {
      tools: [
        { name: "echo" },
        { name: "guarded" },
        { name: "held" },
        { name: "stuck", behavior: { kind: "hang" } },
      ],
    },
    autoTools: ["guarded"],
    promptTools: ["held"],
    principals: [
      { name: "bob", role: "caller", token: TOKENS.bob },
      { name: "carol", role: "caller", token: TOKENS.carol },
    ],
    // The reference's one user answering its own session's prompts ("Allow for this session").
    selfApprove: true,
  });
  const follow = <T>(subject: string, parse: (body: unknown) => T | undefined, into: T[]) =>
    s.client.nc.subscribe(subject, {
      callback: (_error, msg) => {
        const parsed = parse(msg.json());
        if (parsed !== undefined) into.push(parsed);
      },
    });
  follow(s.subjects.callEnd, (body) => CallEndEventSchema.safeParse(body).data, ends);
  follow(s.subjects.approvalsPending, (body) => ApprovalRequestSchema.safeParse(body).data, pending);
  follow(s.subjects.approvalsResolved, (body) => ApprovalResolvedEventSchema.safeParse(body).data, resolved);
  await s.client.nc.flush();
}, 120_000);

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  await s?.stop();
});

/** An MCP session (as bob unless told); with `answer`, it takes approval elicitations and answers them so. */
async function session(
  answer?: (request: ElicitRequest["params"]) => ElicitResult,
  token: string = TOKENS.bob,
): Promise<Client> {
  const client = new Client(
    { name: "sessions-test", version: "1.0.0" },
    { capabilities: answer ? { elicitation: {} } : {} },
  );
  if (answer) client.setRequestHandler(ElicitRequestSchema, async (request) => answer(request.params));
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${s.gateway.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  clients.push(client);
  return client;
}

function sessionIdOf(client: Client): string {
  return (client.transport as StreamableHTTPClientTransport).sessionId!;
}

/** The upstream's log line of the call with these arguments, once the server has it. */
async function upstreamCall(marker: string) {
  let line: Awaited<ReturnType<Services["upstream"]["calls"]>>[number] | undefined;
  await waitFor(`the server to receive the call ${marker}`, async () => {
    line = (await s.upstream.calls()).find((call) => call.arguments?.marker === marker);
    return line !== undefined;
  });
  return line!;
}

async function upstreamCancellation(callId: string) {
  let line: Awaited<ReturnType<Services["upstream"]["cancellations"]>>[number] | undefined;
  await waitFor(`the server to be told call ${callId} was cancelled`, async () => {
    line = (await s.upstream.cancellations()).find((cancel) => cancel._meta?.callId === callId);
    return line !== undefined;
  });
  return line!;
}

async function endOf(callId: string): Promise<CallEndEvent> {
  await waitFor(`the end event of ${callId}`, () => ends.some((end) => end.callId === callId));
  return ends.find((end) => end.callId === callId)!;
}

async function rest(method: string, path: string, token: string, body?: unknown, signal?: AbortSignal) {
  const response = await fetch(new URL(path, s.gateway.url), {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    ...(signal ? { signal } : {}),
  });
  return { status: response.status, body: (await response.json()) as unknown };
}

const echoed = (args: Record<string, unknown>) => ({
  content: [{ type: "text", text: JSON.stringify(args) }],
});
const ALLOW_FOR_SESSION: ElicitResult = { action: "accept", _meta: { persist: "session" } };

describe("threads through the edge", () => {
  it("[28] the server gets _meta.threadId = the MCP session, or the thread the client named", async () => {
    const client = await session();
    await client.callTool({ name: "scripted__echo", arguments: { marker: "own-thread" } });
    await client.callTool({
      name: "scripted__echo",
      arguments: { marker: "named-thread" },
      _meta: { threadId: "codex-thread-28" },
    });
    const own = await upstreamCall("own-thread");
    const named = await upstreamCall("named-thread");
    expect({
      own: own._meta?.threadId,
      named: named._meta?.threadId,
      ends: [
        (await endOf(String(own._meta?.callId))).threadId,
        (await endOf(String(named._meta?.callId))).threadId,
      ],
    }).toEqual({
      own: sessionIdOf(client),
      named: "codex-thread-28",
      ends: [sessionIdOf(client), "codex-thread-28"],
    });
  });

  it("refuses a _meta.threadId that names another MCP session, whose grants it would borrow", async () => {
    const other = await session();
    const client = await session();
    const refused = await client
      .callTool({ name: "scripted__echo", arguments: {}, _meta: { threadId: sessionIdOf(other) } })
      .catch((error: unknown) => (error as Error).message);
    expect(refused).toBe(
      "MCP error -32602: Invalid params: _meta.threadId names another MCP session; name a thread of your own, or leave it out to use this session as the thread",
    );
  });

  it("[36][39] offers Allow for this session, honours it within the session, and asks again in a new session", async () => {
    const asked: Array<ElicitRequest["params"]> = [];
    const first = await session((params) => {
      asked.push(params);
      return ALLOW_FOR_SESSION;
    });
    const results = [
      await first.callTool({ name: "scripted__guarded", arguments: { marker: "grant-1" } }),
      await first.callTool({ name: "scripted__guarded", arguments: { marker: "grant-2" } }),
    ];
    const askedInFirst = asked.length;
    const second = await session((params) => {
      asked.push(params);
      return { action: "accept" };
    });
    results.push(await second.callTool({ name: "scripted__guarded", arguments: { marker: "grant-3" } }));
    expect({
      results,
      persistOffered: asked.map((params) => params._meta?.persist),
      askedInFirst,
      asked: asked.length,
    }).toEqual({
      results: [echoed({ marker: "grant-1" }), echoed({ marker: "grant-2" }), echoed({ marker: "grant-3" })],
      persistOffered: [
        ["session", "always"],
        ["session", "always"],
      ],
      askedInFirst: 1,
      asked: 2,
    });
  });

  it("ends a named thread's session grants with the session that granted them", async () => {
    let asked = 0;
    const answer = (): ElicitResult => {
      asked += 1;
      return ALLOW_FOR_SESSION;
    };
    const thread = { threadId: "codex-thread-ends" };
    const first = await session(answer);
    await first.callTool({ name: "scripted__guarded", arguments: { marker: "named-1" }, _meta: thread });
    await first.callTool({ name: "scripted__guarded", arguments: { marker: "named-2" }, _meta: thread });
    const askedBeforeEnd = asked;
    await (first.transport as StreamableHTTPClientTransport).terminateSession();
    const later = await session(answer);
    await later.callTool({ name: "scripted__guarded", arguments: { marker: "named-3" }, _meta: thread });
    expect({ askedBeforeEnd, askedAfterEnd: asked - askedBeforeEnd }).toEqual({
      askedBeforeEnd: 1,
      askedAfterEnd: 1,
    });
  });

  it("refuses another principal a thread in use, over MCP and REST, so its session grants stay its owner's", async () => {
    const asked = { bob: 0, carol: 0 };
    const answer = (who: keyof typeof asked) => (): ElicitResult => {
      asked[who] += 1;
      return ALLOW_FOR_SESSION;
    };
    const thread = { threadId: "codex-thread-bob" };
    const bob = await session(answer("bob"));
    await bob.callTool({ name: "scripted__guarded", arguments: { marker: "bob-1" }, _meta: thread });
    const carol = await session(answer("carol"), TOKENS.carol);
    const overMcp = await carol
      .callTool({ name: "scripted__guarded", arguments: { marker: "carol-mcp" }, _meta: thread })
      .catch((error: unknown) => (error as Error).message);
    // A thread with a grant (else the call would wait for an approver), and bob's session (echo: no approval).
    const restCall = (threadId: string, tool: string, marker: string) =>
      rest("POST", "/v1/calls", TOKENS.carol, {
        callId: `${marker}-${Date.now()}`,
        threadId,
        tool,
        arguments: JSON.stringify({ marker }),
      });
    const overRest = await restCall(thread.threadId, "mcp__scripted__guarded", "carol-rest");
    const bobSessionOverRest = await restCall(sessionIdOf(bob), "mcp__scripted__echo", "carol-rest-session");
    const kept = await bob.callTool({
      name: "scripted__guarded",
      arguments: { marker: "bob-2" },
      _meta: thread,
    });
    const carolRuns = (await s.upstream.calls()).filter((line) =>
      String(line.arguments?.marker).startsWith("carol-"),
    );
    expect({ overMcp, overRest, bobSessionOverRest, kept, asked, carolRuns }).toEqual({
      overMcp:
        'MCP error -32602: Invalid params: _meta.threadId names a thread another principal (token) is using, and its "Allow for this session" grants are not yours; name a thread of your own, or leave it out to use this MCP session as the thread',
      overRest: {
        status: 400,
        body: {
          error: {
            code: "bad_request",
            message:
              'threadId names a thread another principal (token) is using, and its "Allow for this session" grants are not yours; name a thread of your own, or leave threadId out',
            retryable: false,
          },
        },
      },
      bobSessionOverRest: {
        status: 400,
        body: {
          error: {
            code: "bad_request",
            message:
              "threadId names an MCP session, whose grants are that session's; name a thread of your own, or leave threadId out",
            retryable: false,
          },
        },
      },
      kept: echoed({ marker: "bob-2" }),
      asked: { bob: 1, carol: 0 },
      carolRuns: [],
    });
  });
});

describe("a session that expires", () => {
  let short: Services;
  beforeAll(async () => {
    short = await startServices({
      label: "sessions_expiry",
      script: { tools: [{ name: "guarded" }] },
      autoTools: ["guarded"],
      gatewayLimits: { sessionIdleTtlMs: 1_500 },
    });
  }, 120_000);
  afterAll(async () => {
    await short?.stop();
  });

  it("takes the session grants of its threads with it", async () => {
    let asked = 0;
    const connect = async () => {
      const client = new Client(
        { name: "expiry-test", version: "1.0.0" },
        { capabilities: { elicitation: {} } },
      );
      client.setRequestHandler(ElicitRequestSchema, async () => {
        asked += 1;
        return ALLOW_FOR_SESSION;
      });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${short.gateway.url}/mcp`)));
      return client;
    };
    const thread = { threadId: "codex-thread-expires" };
    const first = await connect();
    await first.callTool({ name: "scripted__guarded", arguments: { n: 1 }, _meta: thread });
    await first.callTool({ name: "scripted__guarded", arguments: { n: 2 }, _meta: thread });
    const askedWhileLive = asked;
    // Gone without ending the session (no DELETE): it expires once idle for the TTL.
    await first.close();
    const grants = await short.client.kvm().open(short.subjects.kv.approvalGrants);
    await waitFor("the expired session's grants to be forgotten", async () => {
      const keys = [];
      for await (const key of await grants.keys("codex-thread-expires.>")) keys.push(key);
      return keys.length === 0;
    });
    const later = await connect();
    await later.callTool({ name: "scripted__guarded", arguments: { n: 3 }, _meta: thread });
    await later.close();
    expect({ askedWhileLive, askedAfterExpiry: asked - askedWhileLive }).toEqual({
      askedWhileLive: 1,
      askedAfterExpiry: 1,
    });
  });
});

describe("cancellation through the edge", () => {
  it("a cancel while the call waits for approval (the client's, or DELETE /v1/calls) withdraws it; the server never sees the call", async () => {
    const client = await session();
    const controller = new AbortController();
    const seen = pending.length;
    const mcpCall = client
      .callTool({ name: "scripted__held", arguments: { marker: "held-mcp" } }, undefined, {
        signal: controller.signal,
      })
      .catch((error: unknown) => error);
    await waitFor("the MCP call's approval request", () => pending.length > seen);
    const mcpRequest = pending[seen]!;
    controller.abort("changed my mind");
    await mcpCall;

    const callId = `rest-held-${Date.now()}`;
    const posted = rest("POST", "/v1/calls", TOKENS.bob, {
      callId,
      tool: "mcp__scripted__held",
      arguments: JSON.stringify({ marker: callId }),
    });
    await waitFor("the REST call's approval request", () => pending.some((p) => p.callId === callId));
    const restRequest = pending.find((p) => p.callId === callId)!;
    const deleted = await rest("DELETE", `/v1/calls/${callId}`, TOKENS.bob);
    const reply = (await posted).body as ToolCallReply;

    const withdrawn = async (request: ApprovalRequest) => {
      await waitFor("the request to be withdrawn", () =>
        resolved.some((r) => r.requestId === request.requestId),
      );
      const end = await endOf(request.callId);
      return {
        resolved: resolved.find((r) => r.requestId === request.requestId),
        end: { status: end.status, result: end.result },
      };
    };
    const cancelled = (request: ApprovalRequest) => ({
      resolved: { requestId: request.requestId, callId: request.callId, decision: "abort", by: "cancel" },
      end: { status: "failed", result: { err: "user cancelled MCP tool call" } },
    });
    const markers = (await s.upstream.calls()).map((line) => line.arguments?.marker);
    expect({
      mcp: await withdrawn(mcpRequest),
      rest: await withdrawn(restRequest),
      deleted: deleted.status,
      reply: { status: reply.status, error: reply.error },
      serverCalled: markers.includes("held-mcp") || markers.includes(callId),
    }).toEqual({
      mcp: cancelled(mcpRequest),
      rest: cancelled(restRequest),
      deleted: 202,
      reply: { status: "skipped", error: "user cancelled MCP tool call" },
      serverCalled: false,
    });
  });

  it("a client's notifications/cancelled reaches the running tool's server, and the end event says so", async () => {
    const client = await session();
    const controller = new AbortController();
    const call = client
      .callTool({ name: "scripted__stuck", arguments: { marker: "stuck-mcp" } }, undefined, {
        signal: controller.signal,
      })
      .catch((error: unknown) => error);
    const callId = String((await upstreamCall("stuck-mcp"))._meta?.callId);
    controller.abort("the user pressed stop");
    await call;
    const reason = "the MCP client sent notifications/cancelled: the user pressed stop";
    const cancelled = await upstreamCancellation(callId);
    const end = await endOf(callId);
    expect({ upstream: cancelled.reason, end: { status: end.status, result: end.result } }).toEqual({
      upstream: reason,
      end: {
        status: "failed",
        result: {
          err: `user cancelled MCP tool call while \`scripted/stuck\` ran (${reason}); the server was sent notifications/cancelled`,
        },
      },
    });
  });

  it("DELETE /v1/calls/{callId} by its caller stops it end to end; another token cannot; the ledger keeps the ending", async () => {
    const callId = `rest-cancel-${Date.now()}`;
    const request = { callId, tool: "mcp__scripted__stuck", arguments: JSON.stringify({ marker: callId }) };
    const posted = rest("POST", "/v1/calls", TOKENS.bob, request);
    await upstreamCall(callId);
    const byCarol = await rest("DELETE", `/v1/calls/${callId}`, TOKENS.carol);
    const byBob = await rest("DELETE", `/v1/calls/${callId}`, TOKENS.bob);
    const reply = (await posted).body as ToolCallReply;
    const reason = `cancelled with DELETE /v1/calls/${callId} by bob`;
    const message = `user cancelled MCP tool call while \`scripted/stuck\` ran (${reason}); the server was sent notifications/cancelled`;
    const again = await rest("POST", "/v1/calls", TOKENS.bob, request);
    expect({
      byCarol: byCarol.status,
      byBob,
      reply: { status: reply.status, error: reply.error },
      upstream: (await upstreamCancellation(callId)).reason,
      end: (await endOf(callId)).result,
      again: { status: again.status, error: (again.body as ToolCallReply).error },
      runs: (await s.upstream.calls()).filter((line) => line.arguments?.marker === callId).length,
    }).toEqual({
      byCarol: 404,
      byBob: { status: 202, body: { callId, cancelled: true } },
      reply: { status: "failed", error: message },
      upstream: reason,
      end: { err: message },
      again: { status: 200, error: message },
      runs: 1,
    });
  });

  it("a REST caller that drops its connection stops its running call", async () => {
    const callId = `rest-drop-${Date.now()}`;
    const controller = new AbortController();
    const posted = rest(
      "POST",
      "/v1/calls",
      TOKENS.bob,
      { callId, tool: "mcp__scripted__stuck", arguments: JSON.stringify({ marker: callId }) },
      controller.signal,
    ).catch((error: unknown) => error);
    await upstreamCall(callId);
    controller.abort();
    await posted;
    const reason = "the HTTP client closed the connection before the call finished";
    expect({
      upstream: (await upstreamCancellation(callId)).reason,
      end: (await endOf(callId)).result,
    }).toEqual({
      upstream: reason,
      end: {
        err: `user cancelled MCP tool call while \`scripted/stuck\` ran (${reason}); the server was sent notifications/cancelled`,
      },
    });
  });
});

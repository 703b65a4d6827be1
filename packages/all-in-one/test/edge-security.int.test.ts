/**
 * The trust boundary at the HTTP edge, attacked as an intruder or a user with the wrong token
 * would, against every service running for real (the gateway with the approvals routes mounted as
 * `pnpm start` mounts them, real NATS, Postgres, dispatcher, catalog and MCP server): a
 * DNS-rebinding Host, a cross-site POST, an `Origin: null` POST, a caller's token trying to
 * approve, a forged `by`, another token reusing a session; and who approves: the approver whose
 * token answered, never the caller (no elicitation to a role that may not approve; an admin's own
 * call is answered by someone else unless `self_approve`, whatever a REST body claims), nobody but
 * approvers when elicitation is off; a client that disconnects withdraws its own approvals only.
 */
import { request } from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { GatewayService } from "@toolbus/gateway";
import {
  type ApprovalRequest,
  type ApprovalResolvedEvent,
  ApprovalResolvedEventSchema,
} from "@toolbus/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Services, startServices, waitFor } from "./support/services.js";

const TOKENS = { alice: "alice-approves", bob: "bob-calls", carol: "carol-calls", root: "root-token" };
let s: Services;
const resolved: ApprovalResolvedEvent[] = [];
const pending: ApprovalRequest[] = [];
const clients: Client[] = [];

beforeAll(async () => {
  s = await startServices({
    label: "edge_security",
    script: { tools: [{ name: "echo" }, { name: "guarded" }] },
    promptTools: ["guarded"],
    principals: [
      { name: "alice", role: "approver", token: TOKENS.alice },
      { name: "bob", role: "caller", token: TOKENS.bob },
      { name: "carol", role: "caller", token: TOKENS.carol },
      { name: "root", role: "admin", token: TOKENS.root },
    ],
    inbox: true,
  });
  s.client.nc.subscribe(s.subjects.approvalsResolved, {
    callback: (_error, msg) => {
      const parsed = ApprovalResolvedEventSchema.safeParse(msg.json());
      if (parsed.success) resolved.push(parsed.data);
    },
  });
  s.client.nc.subscribe(s.subjects.approvalsPending, {
    callback: (_error, msg) => void pending.push(msg.json<ApprovalRequest>()),
  });
  await s.client.nc.flush();
}, 120_000);

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  await s?.stop();
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

/** Raw HTTP, so the test may forge Host and Origin as an attacker's page or DNS would. */
function send(
  gateway: GatewayService,
  options: {
    method?: string;
    path: string;
    token?: string;
    headers?: Record<string, string>;
    body?: unknown;
  },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(options.path, gateway.url),
      {
        method: options.method ?? "GET",
        headers: {
          accept: "application/json, text/event-stream",
          ...(options.body !== undefined ? { "content-type": "application/json" } : {}),
          ...(options.token !== undefined ? { authorization: `Bearer ${options.token}` } : {}),
          ...options.headers,
        },
      },
      (res) => {
        // A stream that was granted is cut as soon as its status is known.
        if ((res.headers["content-type"] ?? "").startsWith("text/event-stream")) {
          res.destroy();
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: "(stream)" });
          return;
        }
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {}
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        });
      },
    );
    req.on("error", reject);
    req.end(options.body === undefined ? undefined : JSON.stringify(options.body));
  });
}

const edgeRefusal = (message: string) => ({ jsonrpc: "2.0", id: null, error: { code: -32000, message } });

/**
 * An MCP client with `token`. `elicit`: it declares elicitation and accepts each one, once
 * `elicit` returns (or never, if what `elicit` returns rejects: when the gateway cancels it).
 */
async function mcpAs(
  token: string,
  options: {
    gateway?: GatewayService;
    elicit?: (params: unknown, cancelled: AbortSignal) => unknown;
  } = {},
): Promise<Client> {
  const client = new Client(
    { name: "edge-security-test", version: "1.0.0" },
    { capabilities: options.elicit ? { elicitation: {} } : {} },
  );
  if (options.elicit) {
    const elicit = options.elicit;
    client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
      await elicit(request.params, extra.signal);
      return { action: "accept" };
    });
  }
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${(options.gateway ?? s.gateway).url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  clients.push(client);
  return client;
}

async function pendingFor(count: number): Promise<ApprovalRequest> {
  await waitFor("an approval request", () => pending.length >= count);
  return pending[count - 1]!;
}

async function resolvedFor(requestId: string): Promise<ApprovalResolvedEvent> {
  await waitFor(`${requestId} to be resolved`, () => resolved.some((event) => event.requestId === requestId));
  return resolved.find((event) => event.requestId === requestId)!;
}

describe("an intruder's requests", () => {
  it("refuses a DNS-rebinding Host on every surface, even with a valid admin token", async () => {
    const routes = ["/mcp", "/v1/catalog", "/v1/events", "/v1/approvals", "/approvals", "/"];
    const answers = await Promise.all(
      routes.map((path) =>
        send(s.gateway, { path, token: TOKENS.root, headers: { host: "evil.example.com:8080" } }),
      ),
    );
    expect(answers.map((answer) => [answer.status, answer.body])).toEqual(
      routes.map(() => [
        403,
        edgeRefusal(
          'Forbidden: Host header "evil.example.com:8080" is not an allowed host (127.0.0.1); add it to [gateway] allowed_hosts if this gateway should answer to it',
        ),
      ]),
    );
  });

  it("refuses a cross-site POST and an Origin-null POST before anything is called or answered", async () => {
    const before = pending.length;
    const call = { callId: "cross-site-1", tool: "scripted__echo", arguments: "{}" };
    const [crossSiteCall, crossSiteApproval, nullOrigin] = await Promise.all([
      send(s.gateway, {
        method: "POST",
        path: "/v1/calls",
        token: TOKENS.root,
        headers: { origin: "https://evil.example.com" },
        body: call,
      }),
      send(s.gateway, {
        method: "POST",
        path: "/v1/approvals/mcp_tool_call_approval_x",
        token: TOKENS.alice,
        headers: { origin: "https://evil.example.com" },
        body: { choice: "allow" },
      }),
      send(s.gateway, {
        method: "POST",
        path: "/v1/calls",
        token: TOKENS.root,
        headers: { origin: "null" },
        body: call,
      }),
    ]);
    expect(
      [crossSiteCall, crossSiteApproval, nullOrigin].map((answer) => [answer.status, answer.body]),
    ).toEqual([
      [
        403,
        edgeRefusal(
          'Forbidden: Origin "https://evil.example.com" is not an allowed host (127.0.0.1); add it to [gateway] allowed_hosts if browsers on it may call this gateway',
        ),
      ],
      [
        403,
        edgeRefusal(
          'Forbidden: Origin "https://evil.example.com" is not an allowed host (127.0.0.1); add it to [gateway] allowed_hosts if browsers on it may call this gateway',
        ),
      ],
      [
        403,
        edgeRefusal(
          "Forbidden: Origin null (a sandboxed frame, a file: page or a cross-site redirect) may not POST; send the request from a page served by an allowed host",
        ),
      ],
    ]);
    const { rows } = await s.db.query(
      "SELECT count(*)::int AS n FROM approval_requests WHERE call_id = 'cross-site-1'",
    );
    expect({ newPending: pending.length - before, stored: rows }).toEqual({
      newPending: 0,
      stored: [{ n: 0 }],
    });
  });

  it("sends the security headers with pages and API answers, and lets no page be framed", async () => {
    const [console, inbox, api] = await Promise.all([
      send(s.gateway, { path: "/" }),
      send(s.gateway, { path: "/approvals" }),
      send(s.gateway, { path: "/v1/servers", token: TOKENS.bob }),
    ]);
    const headers = (answer: Answer) => ({
      status: answer.status,
      nosniff: answer.headers["x-content-type-options"],
      referrer: answer.headers["referrer-policy"],
      framing: /frame-ancestors 'none'/.test(String(answer.headers["content-security-policy"])),
      inlineScriptsByHashOnly: /script-src 'sha256-[^ ;]+'( 'sha256-[^ ;]+')*;/.test(
        String(answer.headers["content-security-policy"]),
      ),
    });
    const page = { status: 200, nosniff: "nosniff", referrer: "no-referrer", framing: true };
    expect([console, inbox, api].map(headers)).toEqual([
      { ...page, inlineScriptsByHashOnly: true },
      { ...page, inlineScriptsByHashOnly: true },
      { ...page, inlineScriptsByHashOnly: false },
    ]);
  });
});

describe("who may approve", () => {
  it("does not let a caller's token list, watch or answer approvals, nor an approver's call tools", async () => {
    const forbidden = (name: string, role: string, needs: string, access: string) =>
      edgeRefusal(
        `Forbidden: the token of ${name} has role ${role}, and this needs ${needs} (access "${access}"); use a token with one of those roles`,
      );
    const answers = await Promise.all([
      send(s.gateway, { path: "/v1/approvals", token: TOKENS.bob }),
      send(s.gateway, { path: "/v1/approvals/events", token: TOKENS.bob }),
      send(s.gateway, {
        method: "POST",
        path: "/v1/approvals/mcp_tool_call_approval_x",
        token: TOKENS.bob,
        body: { choice: "allow" },
      }),
      send(s.gateway, {
        method: "POST",
        path: "/v1/calls",
        token: TOKENS.alice,
        body: { callId: "approver-call", tool: "scripted__echo", arguments: "{}" },
      }),
      send(s.gateway, {
        method: "POST",
        path: "/mcp",
        token: TOKENS.alice,
        body: {
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-11-25",
            capabilities: {},
            clientInfo: { name: "x", version: "1" },
          },
        },
      }),
    ]);
    const callerRefused = forbidden("bob", "caller", "approver or admin", "approve");
    const approverRefused = forbidden("alice", "approver", "caller or admin", "call");
    expect(answers.map((answer) => [answer.status, answer.body])).toEqual([
      [403, callerRefused],
      [403, callerRefused],
      [403, callerRefused],
      [403, approverRefused],
      [403, approverRefused],
    ]);
    const readable = await Promise.all([
      send(s.gateway, { path: "/v1/approvals", token: TOKENS.alice }),
      send(s.gateway, { path: "/v1/approvals/events", token: TOKENS.root }),
    ]);
    expect(readable.map((answer) => answer.status)).toEqual([200, 200]);
  });

  it("records the approver whose token answered, whatever name the body gives", async () => {
    const bob = await mcpAs(TOKENS.bob);
    const count = pending.length + 1;
    const call = bob.callTool({ name: "scripted__guarded", arguments: { n: 1 } });
    const request = await pendingFor(count);
    const answered = await send(s.gateway, {
      method: "POST",
      path: `/v1/approvals/${request.requestId}`,
      token: TOKENS.alice,
      body: { choice: "allow", by: "mallory" },
    });
    expect([answered.status, answered.body]).toEqual([200, { decision: "approved" }]);
    expect(await call).toEqual({ content: [{ type: "text", text: JSON.stringify({ n: 1 }) }] });
    const { rows } = await s.db.query("SELECT resolved_by FROM approval_requests WHERE request_id = $1", [
      request.requestId,
    ]);
    expect({ event: await resolvedFor(request.requestId), stored: rows }).toEqual({
      event: { requestId: request.requestId, callId: request.callId, decision: "approved", by: "alice" },
      stored: [{ resolved_by: "alice" }],
    });
  });

  it("never puts a call's approval to its caller, who may not approve: the call waits for an approver", async () => {
    const asked: unknown[] = [];
    const carol = await mcpAs(TOKENS.carol, { elicit: (params) => asked.push(params) });
    const count = pending.length + 1;
    const call = carol.callTool({ name: "scripted__guarded", arguments: { n: 2 } });
    const request = await pendingFor(count);
    // Who asked is on the request approvers see.
    expect(request.requestedBy).toBe("carol");
    const answered = await send(s.gateway, {
      method: "POST",
      path: `/v1/approvals/${request.requestId}`,
      token: TOKENS.alice,
      body: { choice: "allow" },
    });
    expect({
      answered: answered.status,
      result: await call,
      asked,
      by: (await resolvedFor(request.requestId)).by,
    }).toEqual({
      answered: 200,
      result: { content: [{ type: "text", text: JSON.stringify({ n: 2 }) }] },
      asked: [],
      by: "alice",
    });
  });

  it("refuses an admin answering the approval of its own call, whoever its REST body claims asked", async () => {
    const count = pending.length + 1;
    const call = send(s.gateway, {
      method: "POST",
      path: "/v1/calls",
      token: TOKENS.root,
      body: {
        callId: "self-approval-1",
        tool: "mcp__scripted__guarded",
        arguments: '{"n":4}',
        requestedBy: "alice",
        requesterName: "Alice",
      },
    });
    const request = await pendingFor(count);
    // Neither who asked nor the name to show comes from the body.
    expect([request.requestedBy, request.requesterName]).toEqual(["root", undefined]);
    const own = await send(s.gateway, {
      method: "POST",
      path: `/v1/approvals/${request.requestId}`,
      token: TOKENS.root,
      body: { choice: "allow_always" },
    });
    expect(own.status).toBe(400);
    expect((own.body as { error: { message: string } }).error.message).toBe(
      `root asked for the call of approval request ${request.requestId}, so it may not answer it: another approver must (or set [approvals] self_approve = true to let callers approve their own calls)`,
    );
    const answered = await send(s.gateway, {
      method: "POST",
      path: `/v1/approvals/${request.requestId}`,
      token: TOKENS.alice,
      body: { choice: "allow" },
    });
    expect(answered.status).toBe(200);
    expect(((await call).body as { status: string }).status).toBe("completed");
    expect((await resolvedFor(request.requestId)).by).toBe("alice");
  });

  it("does not put an admin's own call's approval to it by elicitation", async () => {
    const asked: unknown[] = [];
    const root = await mcpAs(TOKENS.root, { elicit: (params) => asked.push(params) });
    const count = pending.length + 1;
    const call = root.callTool({ name: "scripted__guarded", arguments: { n: 5 } });
    const request = await pendingFor(count);
    await send(s.gateway, {
      method: "POST",
      path: `/v1/approvals/${request.requestId}`,
      token: TOKENS.alice,
      body: { choice: "allow" },
    });
    expect({ result: await call, asked, by: (await resolvedFor(request.requestId)).by }).toEqual({
      result: { content: [{ type: "text", text: JSON.stringify({ n: 5 }) }] },
      asked: [],
      by: "alice",
    });
  });

  it("with elicit_approvals off, never asks the calling client: only an approver decides", async () => {
    const quiet = await s.anotherGateway({ elicitApprovals: false });
    const asked: unknown[] = [];
    const carol = await mcpAs(TOKENS.carol, { gateway: quiet, elicit: (params) => asked.push(params) });
    const count = pending.length + 1;
    const call = carol.callTool({ name: "scripted__guarded", arguments: { n: 3 } });
    const request = await pendingFor(count);
    const listed = await send(quiet, { path: "/v1/approvals", token: TOKENS.alice });
    expect((listed.body as { pending: ApprovalRequest[] }).pending.map((p) => p.requestId)).toContain(
      request.requestId,
    );
    const answered = await send(quiet, {
      method: "POST",
      path: `/v1/approvals/${request.requestId}`,
      token: TOKENS.alice,
      body: { choice: "allow" },
    });
    expect({
      answered: answered.status,
      result: await call,
      asked,
      by: (await resolvedFor(request.requestId)).by,
    }).toEqual({
      answered: 200,
      result: { content: [{ type: "text", text: JSON.stringify({ n: 3 }) }] },
      asked: [],
      by: "alice",
    });
  });
});

describe("a client that disconnects", () => {
  it("withdraws only its own pending approvals: another client's stays pending until answered", async () => {
    const bob = await mcpAs(TOKENS.bob);
    const carol = await mcpAs(TOKENS.carol);
    const count = pending.length;
    const leaving = await abandonableCall(bob, TOKENS.bob, { n: "bob" });
    const bobsRequest = await pendingFor(count + 1);
    const staying = carol.callTool({ name: "scripted__guarded", arguments: { n: "carol" } });
    const carolsRequest = await pendingFor(count + 2);
    leaving.abort();
    const withdrawn = await resolvedFor(bobsRequest.requestId);
    const listed = await send(s.gateway, { path: "/v1/approvals", token: TOKENS.alice });
    expect({
      withdrawn: { by: withdrawn.by, decision: withdrawn.decision },
      stillPending: (listed.body as { pending: ApprovalRequest[] }).pending.map((p) => p.requestId),
      carolsAnswered: resolved.some((event) => event.requestId === carolsRequest.requestId),
    }).toEqual({
      withdrawn: { by: "cancel", decision: "abort" },
      stillPending: [carolsRequest.requestId],
      carolsAnswered: false,
    });
    await send(s.gateway, {
      method: "POST",
      path: `/v1/approvals/${carolsRequest.requestId}`,
      token: TOKENS.alice,
      body: { choice: "allow" },
    });
    expect(await staying).toEqual({ content: [{ type: "text", text: JSON.stringify({ n: "carol" }) }] });
  });
});

describe("sessions", () => {
  it("belong to the token that started them: another token gets 404 for the same session id", async () => {
    const bob = await mcpAs(TOKENS.bob);
    const sessionId = (bob.transport as StreamableHTTPClientTransport).sessionId!;
    const list = { jsonrpc: "2.0", id: 7, method: "tools/list", params: {} };
    const headers = { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" };
    const [asCarol, asBob] = await Promise.all([
      send(s.gateway, { method: "POST", path: "/mcp", token: TOKENS.carol, headers, body: list }),
      send(s.gateway, { method: "POST", path: "/mcp", token: TOKENS.bob, headers, body: list }),
    ]);
    expect([
      asCarol.status,
      (asCarol.body as { error?: { code: number } }).error?.code,
      asBob.status,
    ]).toEqual([404, -32001, 200]);
  });
});

/** A tools/call on the client's session over a connection the test can cut, as a client that goes away. */
async function abandonableCall(client: Client, token: string, args: Record<string, unknown>) {
  const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId!;
  const controller = new AbortController();
  const response = await fetch(`${s.gateway.url}/mcp`, {
    method: "POST",
    headers: {
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
      authorization: `Bearer ${token}`,
      "mcp-session-id": sessionId,
      "mcp-protocol-version": "2025-11-25",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 99,
      method: "tools/call",
      params: { name: "scripted__guarded", arguments: args },
    }),
    signal: controller.signal,
  });
  expect(response.status).toBe(200);
  return controller;
}

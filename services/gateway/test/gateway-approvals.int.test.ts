/**
 * Approvals at the edge: a call that needs a person is put to an MCP client that can answer
 * elicitations, in the reference's form shape; other clients leave it to the inbox; an
 * elicitation is cancelled when answered elsewhere or outlived by its call, never once the client
 * answered it; a client that goes away mid-call has the call's approval withdrawn, or its running
 * tool stopped. The approvals service is stood in for at its bus seam (fake-approvals.ts);
 * catalog, dispatcher and servers are real.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Subscription } from "@nats-io/transport-node";
import { cancellationsIn, elicitationsIn, receivedMessages } from "@toolbus/testkit";
import { type StdioTestServer, startTestServer } from "@toolbus/testkit/mcp-test-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayService } from "../src/gateway-service.js";
import { type FakeApprovals, fakeApprovals } from "./support/fake-approvals.js";
import { MCP_ACCEPT } from "./support/http.js";
import { eventually, mcpClient, Stack, tomlFor } from "./support/stack.js";

let stack: Stack;
let gateway: GatewayService;
let approvals: FakeApprovals;
const clients: Client[] = [];
const begun: string[] = [];
let beginWatch: Subscription;
let openServer: StdioTestServer;

async function client(withElicitation: boolean): Promise<Client> {
  const connected = await mcpClient(gateway, withElicitation ? { capabilities: { elicitation: {} } } : {});
  clients.push(connected);
  return connected;
}

beforeAll(async () => {
  const guarded = await startTestServer({ transport: "stdio", script: { tools: [{ name: "echo" }] } });
  const open = await startTestServer({
    transport: "stdio",
    script: { tools: [{ name: "echo" }, { name: "hang", behavior: { kind: "hang" } }] },
  });
  openServer = open;
  stack = await Stack.start(
    "gw_approvals",
    tomlFor([
      { name: "guarded", command: guarded.command, args: guarded.args, approvalMode: "prompt" },
      { name: "open", command: open.command, args: open.args, approvalMode: "approve" },
    ]),
  );
  stack.defer(() => guarded.dispose());
  stack.defer(() => open.dispose());
  approvals = fakeApprovals(stack.nc, stack.subjects);
  beginWatch = stack.nc.subscribe(stack.subjects.callBegin, {
    callback: (_error, msg) => {
      begun.push(msg.json<{ callId: string }>().callId);
    },
  });
  gateway = await stack.gateway();
}, 90_000);

afterAll(async () => {
  for (const connected of clients) await connected.close().catch(() => undefined);
  beginWatch?.unsubscribe();
  approvals?.stop();
  await stack?.close();
});

describe("approval prompts", () => {
  it("[37] puts the approval to a client that supports elicitation, in the reference's form shape, and runs the call it allows", async () => {
    const connected = await client(true);
    const asked: unknown[] = [];
    connected.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return { action: "accept" };
    });
    const result = await connected.callTool({
      name: "guarded__echo",
      arguments: { path: "/tmp/x", depth: 2 },
    });
    const request = approvals.pending.at(-1)!;
    expect({ result, asked, resolves: approvals.resolves }).toEqual({
      result: { content: [{ type: "text", text: JSON.stringify({ path: "/tmp/x", depth: 2 }) }] },
      asked: [
        {
          mode: "form",
          message: 'Allow the guarded MCP server to run tool "echo"?',
          requestedSchema: { type: "object", properties: {} },
          _meta: {
            codex_approval_kind: "mcp_tool_call",
            persist: "session",
            tool_description: "",
            tool_params: { path: "/tmp/x", depth: 2 },
            tool_params_display: [
              { name: "depth", value: 2, display_name: "depth" },
              { name: "path", value: "/tmp/x", display_name: "path" },
            ],
          },
        },
      ],
      // Auth is off on this gateway: the client answers as anonymous.
      resolves: [{ requestId: request.requestId, choice: "allow", by: "anonymous" }],
    });
  });

  it("declines the call when the client declines, and the server never runs it", async () => {
    const connected = await client(true);
    connected.setRequestHandler(ElicitRequestSchema, async () => ({ action: "decline" }));
    const result = await connected.callTool({ name: "guarded__echo", arguments: { n: 1 } });
    expect({ result, choice: approvals.resolves.at(-1)?.choice }).toEqual({
      result: { content: [{ type: "text", text: "user rejected MCP tool call" }], isError: true },
      choice: "decline",
    });
  });

  it("leaves the approval to the inbox for a client without the elicitation capability", async () => {
    const connected = await client(false);
    const before = approvals.pending.length;
    const call = connected.callTool({ name: "guarded__echo", arguments: { n: 2 } });
    const request = await eventually("the pending approval", () => approvals.pending[before]);
    const resolvesBefore = approvals.resolves.length;
    // The inbox answers, as a person would there.
    await stack.nc.request(
      stack.subjects.approvalsResolve,
      JSON.stringify({ requestId: request.requestId, choice: "allow" }),
      { timeout: 5_000 },
    );
    expect({ result: await call, resolves: approvals.resolves.slice(resolvesBefore) }).toEqual({
      result: { content: [{ type: "text", text: JSON.stringify({ n: 2 }) }] },
      resolves: [{ requestId: request.requestId, choice: "allow" }],
    });
  });
});

describe("approval elicitations that end without the client's answer", () => {
  it("are not cancelled once the client has answered them, though the approval's resolved event comes after", async () => {
    const connected = await client(true);
    const messages = receivedMessages(connected);
    connected.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept" }));
    // The stand-in announces the answer before the call goes on, so the gateway hears it while
    // the call still runs, and any cancellation would reach the client before the call's result.
    const result = await connected.callTool({ name: "guarded__echo", arguments: { answered: true } });
    expect({ result, asked: elicitationsIn(messages).length, cancelled: cancellationsIn(messages) }).toEqual({
      result: { content: [{ type: "text", text: JSON.stringify({ answered: true }) }] },
      asked: 1,
      cancelled: [],
    });
  });

  it("are cancelled when the approval is answered elsewhere (the inbox, another approver)", async () => {
    const connected = await client(true);
    const messages = receivedMessages(connected);
    waitForCancel(connected);
    const before = approvals.pending.length;
    const call = connected.callTool({ name: "guarded__echo", arguments: { elsewhere: true } });
    const request = await eventually("the pending approval", () => approvals.pending[before]);
    const [asked] = await eventually("the elicitation", () => present(elicitationsIn(messages)));
    await stack.nc.request(
      stack.subjects.approvalsResolve,
      JSON.stringify({ requestId: request.requestId, choice: "allow" }),
      { timeout: 5_000 },
    );
    expect({ result: await call, cancelled: cancellationsIn(messages) }).toEqual({
      result: { content: [{ type: "text", text: JSON.stringify({ elsewhere: true }) }] },
      cancelled: [{ requestId: asked!.id, reason: "Error: the approval was answered elsewhere" }],
    });
  });

  it("are cancelled when the call ends while they are open, even with no resolved event", async () => {
    const connected = await client(true);
    const messages = receivedMessages(connected);
    waitForCancel(connected);
    const before = approvals.pending.length;
    const call = connected.callTool({ name: "guarded__echo", arguments: { quiet: true } });
    const request = await eventually("the pending approval", () => approvals.pending[before]);
    const [asked] = await eventually("the elicitation", () => present(elicitationsIn(messages)));
    approvals.answerQuietly(request.requestId, "allow");
    expect({ result: await call, cancelled: cancellationsIn(messages) }).toEqual({
      result: { content: [{ type: "text", text: JSON.stringify({ quiet: true }) }] },
      cancelled: [{ requestId: asked!.id, reason: "Error: the tool call no longer waits for this approval" }],
    });
  });
});

/** The client leaves elicitations unanswered until the gateway cancels them. */
function waitForCancel(connected: Client): void {
  connected.setRequestHandler(
    ElicitRequestSchema,
    (_request, extra) =>
      new Promise((_resolve, reject) => {
        extra.signal.addEventListener("abort", () => reject(extra.signal.reason), { once: true });
      }),
  );
}

function present<T>(items: T[]): T[] | undefined {
  return items.length > 0 ? items : undefined;
}

describe("a client that goes away mid-call", () => {
  it("has the call's pending approval withdrawn, and the gateway keeps serving others", async () => {
    const connected = await client(false);
    const before = approvals.pending.length;
    const aborted = await startAbandonedCall(connected, "guarded__echo");
    const request = await eventually("the pending approval", () => approvals.pending[before]);
    aborted.abort();
    const cancel = await eventually("the approval to be withdrawn", () =>
      approvals.cancels.find((c) => c.callId === request.callId),
    );
    expect(cancel).toEqual({
      callId: request.callId,
      reason: "the MCP client closed the connection before the call was answered",
    });
    const other = await client(false);
    expect(await other.callTool({ name: "open__echo", arguments: { still: "serving" } })).toEqual({
      content: [{ type: "text", text: JSON.stringify({ still: "serving" }) }],
    });
  });

  it("has the call's pending approval withdrawn when the client cancels the request", async () => {
    const connected = await client(false);
    const before = approvals.pending.length;
    const cancelling = new AbortController();
    const call = connected.callTool({ name: "guarded__echo", arguments: {} }, undefined, {
      signal: cancelling.signal,
    });
    const request = await eventually("the pending approval", () => approvals.pending[before]);
    cancelling.abort("changed my mind");
    await expect(call).rejects.toThrow();
    const cancel = await eventually("the approval to be withdrawn", () =>
      approvals.cancels.find((c) => c.callId === request.callId),
    );
    expect(cancel).toEqual({
      callId: request.callId,
      reason: "the MCP client sent notifications/cancelled: changed my mind",
    });
  });

  it("has the call stopped on its server when it was already running there", async () => {
    const connected = await client(false);
    const seen = begun.length;
    const aborted = await startAbandonedCall(connected, "open__hang");
    const callId = await eventually("the call to begin", () => begun[seen]);
    await eventually("the server to run the call", async () =>
      (await openServer.calls()).find((line) => line._meta?.callId === callId),
    );
    aborted.abort();
    const stopped = await eventually("the server to be told", async () =>
      (await openServer.cancellations()).find((line) => line._meta?.callId === callId),
    );
    expect({
      reason: stopped.reason,
      approvalWithdrawn: approvals.cancels.some((c) => c.callId === callId),
    }).toEqual({
      reason: "the MCP client closed the connection before the call was answered",
      approvalWithdrawn: false,
    });
  });
});

/** Sends tools/call on the client's session with a raw fetch whose connection the test can cut. */
async function startAbandonedCall(connected: Client, name: string): Promise<AbortController> {
  const sessionId = (connected.transport as { sessionId?: string }).sessionId!;
  const controller = new AbortController();
  const response = await fetch(`${gateway.url}/mcp`, {
    method: "POST",
    headers: {
      accept: MCP_ACCEPT,
      "content-type": "application/json",
      "mcp-session-id": sessionId,
      "mcp-protocol-version": "2025-11-25",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 99, method: "tools/call", params: { name, arguments: {} } }),
    signal: controller.signal,
  });
  expect(response.status).toBe(200);
  return controller;
}

/**
 * `[approvals] self_approve = true`: a principal is asked its own call's approval by elicitation
 * and may answer it, a caller too (the reference's one user answering its own prompts); an
 * approver answering first cancels that question. (Off, the default: edge-security.)
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  type ApprovalRequest,
  type ApprovalResolvedEvent,
  ApprovalResolvedEventSchema,
} from "@toolbus/protocol";
import { cancellationsIn, elicitationsIn, receivedMessages } from "@toolbus/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Services, startServices, waitFor } from "./support/services.js";

const TOKENS = { alice: "alice-approves", carol: "carol-calls", root: "root-token" };
let s: Services;
const resolved: ApprovalResolvedEvent[] = [];
const pending: ApprovalRequest[] = [];
const clients: Client[] = [];

beforeAll(async () => {
  s = await startServices({
    label: "self_approval",
    script: { tools: [{ name: "guarded" }] },
    promptTools: ["guarded"],
    principals: [
      { name: "alice", role: "approver", token: TOKENS.alice },
      { name: "carol", role: "caller", token: TOKENS.carol },
      { name: "root", role: "admin", token: TOKENS.root },
    ],
    inbox: true,
    selfApprove: true,
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

/** An MCP client with `token` that declares elicitation and accepts each once `elicit` returns. */
async function mcpAs(
  token: string,
  elicit: (params: unknown, cancelled: AbortSignal) => unknown,
): Promise<Client> {
  const client = new Client(
    { name: "self-approval-test", version: "1.0.0" },
    { capabilities: { elicitation: {} } },
  );
  client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
    await elicit(request.params, extra.signal);
    return { action: "accept" };
  });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${s.gateway.url}/mcp`), {
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

function answer(requestId: string, token: string, choice: string): Promise<Response> {
  return fetch(`${s.gateway.url}/v1/approvals/${requestId}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ choice }),
  });
}

describe("with self_approve on", () => {
  it("asks an admin its own call's approval by elicitation, and records it as who answered", async () => {
    const asked: unknown[] = [];
    const root = await mcpAs(TOKENS.root, (params) => asked.push(params));
    const messages = receivedMessages(root);
    const count = pending.length + 1;
    const result = await root.callTool({ name: "scripted__guarded", arguments: { n: 1 } });
    const request = await pendingFor(count);
    expect({
      result,
      asked: asked.length,
      requestedBy: request.requestedBy,
      by: (await resolvedFor(request.requestId)).by,
      cancelled: cancellationsIn(messages),
    }).toEqual({
      result: { content: [{ type: "text", text: JSON.stringify({ n: 1 }) }] },
      asked: 1,
      requestedBy: "root",
      by: "root",
      cancelled: [],
    });
  });

  it("cancels that elicitation when an approver answers in the REST inbox first", async () => {
    const root = await mcpAs(
      TOKENS.root,
      (_params, cancelled) =>
        new Promise((_resolve, reject) => {
          cancelled.addEventListener("abort", () => reject(cancelled.reason), { once: true });
        }),
    );
    const messages = receivedMessages(root);
    const count = pending.length + 1;
    const call = root.callTool({ name: "scripted__guarded", arguments: { n: "inbox" } });
    const request = await pendingFor(count);
    await waitFor("the elicitation", () => elicitationsIn(messages).length > 0);
    const answered = await answer(request.requestId, TOKENS.alice, "allow");
    const result = await call;
    expect({
      answered: answered.status,
      result,
      cancelled: cancellationsIn(messages).map((params) => params?.requestId),
      by: (await resolvedFor(request.requestId)).by,
    }).toEqual({
      answered: 200,
      result: { content: [{ type: "text", text: JSON.stringify({ n: "inbox" }) }] },
      cancelled: [elicitationsIn(messages)[0]!.id],
      by: "alice",
    });
  });

  it("asks a caller its own call's approval too, though its role may answer no one else's", async () => {
    const asked: unknown[] = [];
    const carol = await mcpAs(TOKENS.carol, (params) => asked.push(params));
    const count = pending.length + 1;
    const result = await carol.callTool({ name: "scripted__guarded", arguments: { n: 3 } });
    const request = await pendingFor(count);
    expect({ result, asked: asked.length, by: (await resolvedFor(request.requestId)).by }).toEqual({
      result: { content: [{ type: "text", text: JSON.stringify({ n: 3 }) }] },
      asked: 1,
      by: "carol",
    });
    // Its role still may not answer approvals over REST, its own or anyone's.
    expect((await answer(request.requestId, TOKENS.carol, "allow")).status).toBe(403);
  });
});

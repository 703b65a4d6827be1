/**
 * The 2026-07-28 era at the edge, on the same URL as 2025 sessions: the v2 SDK's client pinned
 * to 2026-07-28 discovers the gateway, lists (with cache hints), calls, reads a resource, gets a
 * prompt and hears catalog changes on `subscriptions/listen`; an approval reaches it as
 * `input_required`, and its answer resumes the call — on another replica too; an answer cannot
 * be replayed, and a request whose headers contradict its body is refused with -32020. The
 * approvals service is stood in for at its bus seam (fake-approvals.ts); catalog, dispatcher and
 * servers are real.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Kvm } from "@nats-io/kv";
import type { Subscription } from "@nats-io/transport-node";
import { type CatalogServerEntry, catalogKey } from "@toolbus/protocol";
import { type StdioTestServer, startTestServer } from "@toolbus/testkit/mcp-test-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayService } from "../src/gateway-service.js";
import { type FakeApprovals, fakeApprovals } from "./support/fake-approvals.js";
import { MCP_ACCEPT } from "./support/http.js";
import { eventually, Stack, tomlFor } from "./support/stack.js";

const MODERN = "2026-07-28";
const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } },
};

let stack: Stack;
let gateway: GatewayService;
let other: GatewayService;
let approvals: FakeApprovals;
let app: StdioTestServer;
const clients: Client[] = [];
const begun: string[] = [];
let beginWatch: Subscription;
const ALICE = "alice-token-0123456789abcdef0123456789";
const BOB = "bob-token-0123456789abcdef0123456789abc";

async function modernClient(onElicit?: (params: unknown) => Record<string, unknown>): Promise<Client> {
  const client = new Client(
    { name: "v2-client", version: "1.0.0" },
    {
      capabilities: onElicit ? { elicitation: { form: {} } } : {},
      versionNegotiation: { mode: { pin: MODERN } },
    },
  );
  if (onElicit) {
    client.setRequestHandler("elicitation/create", async (request) => onElicit(request.params) as never);
  }
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`)));
  clients.push(client);
  return client;
}

/** One 2026-07-28 request by hand: its JSON-RPC answer (from a JSON body or the SSE stream's last message). */
async function post(
  target: GatewayService,
  method: string,
  params: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ status: number; message: Record<string, unknown> }> {
  const { status, messages } = await postForAll(target, method, params, headers);
  return { status, message: messages.at(-1) ?? {} };
}

/** One 2026-07-28 request by hand: every JSON-RPC message of its answer, in order. */
async function postForAll(
  target: GatewayService,
  method: string,
  params: Record<string, unknown>,
  headers: Record<string, string> = {},
  envelope: Record<string, unknown> = {},
): Promise<{ status: number; messages: Array<Record<string, unknown>> }> {
  const response = await fetch(`${target.url}/mcp`, {
    method: "POST",
    headers: {
      accept: MCP_ACCEPT,
      "content-type": "application/json",
      "mcp-protocol-version": MODERN,
      "mcp-method": method,
      ...(typeof params.name === "string" ? { "mcp-name": params.name } : {}),
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method,
      params: { ...params, _meta: { ...ENVELOPE, ...envelope } },
    }),
  });
  const text = await response.text();
  const messages = response.headers.get("content-type")?.includes("text/event-stream")
    ? text
        .split("\n")
        .filter((line) => line.startsWith("data: "))
        .map((line) => JSON.parse(line.slice("data: ".length)) as Record<string, unknown>)
    : [JSON.parse(text) as Record<string, unknown>];
  return { status: response.status, messages };
}

beforeAll(async () => {
  app = await startTestServer({
    transport: "stdio",
    script: {
      tools: [
        { name: "echo" },
        { name: "sample", behavior: { kind: "sample", prompt: "Say hi" } },
        { name: "log", behavior: { kind: "log", level: "warning", data: "disk almost full" } },
        {
          name: "ask",
          behavior: {
            kind: "elicit",
            message: "Which colour?",
            requestedSchema: { type: "object", properties: { colour: { type: "string" } } },
          },
        },
      ],
      resources: [{ uri: "note://today", name: "today", mimeType: "text/plain", text: "water the plants" }],
      prompts: [{ name: "plan", text: "plan the week" }],
    },
  });
  const guarded = await startTestServer({ transport: "stdio", script: { tools: [{ name: "echo" }] } });
  stack = await Stack.start(
    "gw_modern",
    tomlFor([
      { name: "open", command: app.command, args: app.args, approvalMode: "approve" },
      { name: "guarded", command: guarded.command, args: guarded.args, approvalMode: "prompt" },
    ]),
  );
  stack.defer(() => app.dispose());
  stack.defer(() => guarded.dispose());
  approvals = fakeApprovals(stack.nc, stack.subjects);
  beginWatch = stack.nc.subscribe(stack.subjects.callBegin, {
    callback: (_error, msg) => {
      begun.push(msg.json<{ callId: string }>().callId);
    },
  });
  gateway = await stack.gateway();
  other = await stack.gateway();
}, 120_000);

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  beginWatch?.unsubscribe();
  approvals?.stop();
  await stack?.close();
});

describe("a v2 client pinned to 2026-07-28", () => {
  it("connects through server/discover and lists, calls, reads and gets a prompt", async () => {
    const client = await modernClient();
    const listed = await client.listTools();
    const called = await client.callTool({ name: "open__echo", arguments: { said: "hi" } });
    const read = await client.readResource({ uri: "note://today" });
    const prompt = await client.getPrompt({ name: "open__plan" });
    expect({
      version: client.getNegotiatedProtocolVersion(),
      tools: listed.tools.map((tool) => tool.name).filter((name) => name.includes("__")),
      cache: [listed.ttlMs, listed.cacheScope],
      called: called.content,
      read: read.contents,
      prompt: prompt.messages,
    }).toEqual({
      version: MODERN,
      tools: ["guarded__echo", "open__ask", "open__echo", "open__log", "open__sample"],
      // Auth is off on this gateway: every caller gets the same list.
      cache: [60_000, "public"],
      called: [{ type: "text", text: JSON.stringify({ said: "hi" }) }],
      read: [{ uri: "note://today", mimeType: "text/plain", text: "water the plants" }],
      prompt: [{ role: "user", content: { type: "text", text: "plan the week" } }],
    });
  });

  it("answers an approval put to it as input_required, in the reference's form shape, and the call runs once", async () => {
    const asked: unknown[] = [];
    const client = await modernClient((params) => {
      asked.push(params);
      return { action: "accept" };
    });
    const resolvesBefore = approvals.resolves.length;
    const result = await client.callTool({ name: "guarded__echo", arguments: { path: "/tmp/x" } });
    const request = approvals.pending.at(-1)!;
    expect({
      result: result.content,
      asked,
      resolves: approvals.resolves.slice(resolvesBefore),
      began: begun.filter((callId) => callId === request.callId).length,
    }).toEqual({
      result: [{ type: "text", text: JSON.stringify({ path: "/tmp/x" }) }],
      asked: [
        {
          mode: "form",
          message: 'Allow the guarded MCP server to run tool "echo"?',
          requestedSchema: { type: "object", properties: {} },
          _meta: expect.objectContaining({
            codex_approval_kind: "mcp_tool_call",
            tool_params: { path: "/tmp/x" },
          }),
        },
      ],
      resolves: [{ requestId: request.requestId, choice: "allow", by: "anonymous" }],
      began: 1,
    });
  });

  it("answers its server's elicitation put to it as input_required, and the server gets the answer", async () => {
    const asked: unknown[] = [];
    const client = await modernClient((params) => {
      asked.push(params);
      return { action: "accept", content: { colour: "teal" } };
    });
    const result = await client.callTool({ name: "open__ask", arguments: {} });
    expect({ result: result.content, asked }).toEqual({
      result: [{ type: "text", text: JSON.stringify({ action: "accept", content: { colour: "teal" } }) }],
      asked: [
        {
          mode: "form",
          message: "Which colour?",
          requestedSchema: { type: "object", properties: { colour: { type: "string" } } },
        },
      ],
    });
  });

  it("answers its 2025 server's sampling request put to it as input_required; one that cannot sample is not asked", async () => {
    const sampler = new Client(
      { name: "v2-sampler", version: "1.0.0" },
      { capabilities: { sampling: {} }, versionNegotiation: { mode: { pin: MODERN } } },
    );
    const asked: unknown[] = [];
    sampler.setRequestHandler("sampling/createMessage", async (request) => {
      asked.push(request.params.messages);
      return { role: "assistant", content: { type: "text", text: "hi from 2026" }, model: "m" } as never;
    });
    await sampler.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`)));
    clients.push(sampler);
    const sampled = await sampler.callTool({ name: "open__sample", arguments: {} });
    const refused = await (await modernClient()).callTool({ name: "open__sample", arguments: {} });
    expect({ sampled: sampled.content, asked, refused: JSON.stringify(refused.content) }).toEqual({
      sampled: [{ type: "text", text: "hi from 2026" }],
      asked: [[{ role: "user", content: { type: "text", text: "Say hi" } }]],
      refused: expect.stringContaining("did not declare the sampling capability"),
    });
  });

  it("gets its server's log messages at the level its request names, and none when it names none", async () => {
    const logged = async (envelope: Record<string, unknown>) => {
      const { messages } = await postForAll(gateway, "tools/call", { name: "open__log" }, {}, envelope);
      return {
        logs: messages.filter((message) => message.method === "notifications/message").map((m) => m.params),
        answered: (messages.at(-1)?.result as { content?: unknown } | undefined)?.content,
      };
    };
    const answered = [{ type: "text", text: "logged" }];
    expect({
      unnamed: await logged({}),
      warning: await logged({ "io.modelcontextprotocol/logLevel": "warning" }),
      error: await logged({ "io.modelcontextprotocol/logLevel": "error" }),
    }).toEqual({
      unnamed: { logs: [], answered },
      warning: {
        logs: [expect.objectContaining({ level: "warning", data: "disk almost full" })],
        answered,
      },
      error: { logs: [], answered },
    });
  });

  it("hears a catalog change on subscriptions/listen, and lists the new tool", async () => {
    const client = await modernClient();
    let changes = 0;
    client.setNotificationHandler("notifications/tools/list_changed", () => {
      changes += 1;
    });
    const subscription = await client.listen({ toolsListChanged: true });
    const kv = await new Kvm(stack.nc).open(stack.subjects.kv.catalog);
    const open = (await kv.get(catalogKey("open")))!.json<CatalogServerEntry>();
    await kv.put(catalogKey("zeta"), JSON.stringify({ ...open, server: "zeta" }));
    try {
      await eventually("tools/list_changed on the listen stream", () => (changes > 0 ? true : undefined));
      const { tools } = await client.listTools();
      expect({
        honored: subscription.honoredFilter,
        listed: tools.map((tool) => tool.name).filter((name) => name.startsWith("zeta__")),
      }).toEqual({
        honored: { toolsListChanged: true },
        listed: ["zeta__ask", "zeta__echo", "zeta__log", "zeta__sample"],
      });
    } finally {
      await subscription.close();
      await kv.delete(catalogKey("zeta"));
    }
  });
});

describe("input_required across replicas", () => {
  it("resumes the call on another replica with the answer, and the same answer sent again is refused", async () => {
    const asked = await post(gateway, "tools/call", { name: "guarded__echo", arguments: { n: 7 } });
    const result = asked.message.result as {
      resultType: string;
      requestState: string;
      inputRequests: unknown;
    };
    expect({
      status: asked.status,
      resultType: result.resultType,
      inputs: Object.keys(result.inputRequests as object),
    }).toEqual({
      status: 200,
      resultType: "input_required",
      inputs: ["approval"],
    });
    const answer = {
      name: "guarded__echo",
      arguments: { n: 7 },
      inputResponses: { approval: { action: "accept" } },
      requestState: result.requestState,
    };
    const resumed = await post(other, "tools/call", answer);
    const replayed = await post(gateway, "tools/call", answer);
    const { callId } = approvals.pending.at(-1)!;
    expect({
      resumed: (resumed.message.result as { content: unknown }).content,
      replayed: (replayed.message.error as { code: number; message: string }).code,
      began: begun.filter((id) => id === callId).length,
    }).toEqual({ resumed: [{ type: "text", text: JSON.stringify({ n: 7 }) }], replayed: -32602, began: 1 });
    expect((replayed.message.error as { message: string }).message).toContain(
      "requestState names nothing waiting for this client's answer",
    );
  });

  it("takes the answer to its server's elicitation on another replica to the replica its connector asks", async () => {
    const asked = await post(gateway, "tools/call", { name: "open__ask", arguments: {} });
    const result = asked.message.result as {
      resultType: string;
      requestState: string;
      inputRequests: Record<string, { params: { message: string } }>;
    };
    expect([result.resultType, result.inputRequests.elicitation?.params.message]).toEqual([
      "input_required",
      "Which colour?",
    ]);
    const resumed = await post(other, "tools/call", {
      name: "open__ask",
      arguments: {},
      inputResponses: { elicitation: { action: "accept", content: { colour: "plum" } } },
      requestState: result.requestState,
    });
    expect((resumed.message.result as { content: unknown }).content).toEqual([
      { type: "text", text: JSON.stringify({ action: "accept", content: { colour: "plum" } }) },
    ]);
  });

  it("refuses a requestState it never handed out", async () => {
    const forged = await post(gateway, "tools/call", {
      name: "guarded__echo",
      arguments: {},
      inputResponses: { approval: { action: "accept" } },
      requestState: "A".repeat(32),
    });
    expect((forged.message.error as { code: number }).code).toBe(-32602);
  });
});

describe("with auth on", () => {
  it("keeps a handed-back call for its own principal: another's answer is refused and leaves it to the caller", async () => {
    const guarded = await stack.gateway({ tokens: [ALICE, BOB] });
    const as = (token: string) => ({ authorization: `Bearer ${token}` });
    const listed = await post(guarded, "tools/list", {}, as(ALICE));
    const asked = await post(
      guarded,
      "tools/call",
      { name: "guarded__echo", arguments: { n: 8 } },
      as(ALICE),
    );
    const { requestState } = asked.message.result as { requestState: string };
    const answer = {
      name: "guarded__echo",
      arguments: { n: 8 },
      inputResponses: { approval: { action: "accept" } },
      requestState,
    };
    const stolen = await post(guarded, "tools/call", answer, as(BOB));
    const own = await post(guarded, "tools/call", answer, as(ALICE));
    const list = listed.message.result as { ttlMs: number; cacheScope: string };
    expect({
      cache: [list.ttlMs, list.cacheScope],
      stolen: (stolen.message.error as { code: number }).code,
      own: (own.message.result as { content: unknown }).content,
    }).toEqual({
      // Behind auth a list is the caller's: no shared cache may keep it.
      cache: [60_000, "private"],
      stolen: -32602,
      own: [{ type: "text", text: JSON.stringify({ n: 8 }) }],
    });
  });
});

describe("headers", () => {
  it("refuses an Mcp-Method header that contradicts the body with -32020", async () => {
    const refused = await post(gateway, "tools/list", {}, { "mcp-method": "prompts/list" });
    expect({ status: refused.status, code: (refused.message.error as { code: number }).code }).toEqual({
      status: 400,
      code: -32020,
    });
  });
});

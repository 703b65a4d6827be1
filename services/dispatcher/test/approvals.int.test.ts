/**
 * The approval step of the call path (docs/reference-behavior.md §4 step 5, docs/contract.md
 * "Approvals"), against a stand-in for the approvals service on `<prefix>.approvals.decide`
 * (the service itself is tested in services/approvals): what the dispatcher asks, how each
 * decision ends the call, a hook's rewrite of the input, retries while the service is
 * unavailable, settling `approve` locally, and a blocking PostToolUse hook.
 */
import type {
  ApprovalDecideRequest,
  ApprovalDecideResult,
  Envelope,
  PostToolUseRequest,
} from "@toolbus/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lifecycle, notRunReply, phased, textBody } from "./support/expect.js";
import { type ApprovalsStandIn, DispatchHarness } from "./support/harness.js";

let h: DispatchHarness;
let revision: number;
/** What the stand-in answers next; each test sets it. */
let answer: (request: ApprovalDecideRequest) => Envelope<ApprovalDecideResult> = () => ({
  ok: true,
  result: { decision: "approved", source: "human" },
});
let approvals: ApprovalsStandIn;

beforeAll(async () => {
  h = await DispatchHarness.start({
    label: "approvals",
    script: {
      tools: [
        {
          name: "asked",
          title: "Asked",
          description: "needs a human",
          annotations: { destructiveHint: true },
        },
        { name: "free" },
        { name: "posted" },
      ],
    },
    toolModes: { asked: "prompt" },
    hooks: {
      hooks: {
        PostToolUse: [{ matcher: "mcp__scripted__posted", hooks: [{ type: "command", command: "true" }] }],
      },
    },
  });
  revision = (await h.catalog()).revision;
  approvals = await h.standIn<ApprovalDecideRequest>(h.subjects.approvalsDecide, (request) =>
    answer(request),
  );
});
afterAll(async () => h?.close());

const approved = (result: ApprovalDecideResult): Envelope<ApprovalDecideResult> => ({ ok: true, result });
const serverCallsFor = async (callId: string) =>
  (await h.scripted!.calls()).filter((call) => call._meta?.callId === callId);

describe("asking the approvals service", () => {
  it("sends the tool's identity, annotations, fingerprint and the parsed arguments", async () => {
    answer = () => approved({ decision: "approved", source: "human" });
    const tool = await h.tool("mcp__scripted__asked");
    const callId = h.callId();
    const reply = await h.ok({
      callId,
      threadId: "thread-a",
      turnId: "turn-a",
      tool: "mcp__scripted__asked",
      arguments: '{"q":1}',
      strictAutoReview: true,
    });
    expect({ status: reply.status, asked: approvals.requests.at(-1)?.request }).toEqual({
      status: "completed",
      asked: {
        callId,
        threadId: "thread-a",
        turnId: "turn-a",
        server: "scripted",
        tool: "asked",
        hookName: "mcp__scripted__asked",
        arguments: { q: 1 },
        annotations: { destructiveHint: true },
        title: "Asked",
        description: "needs a human",
        fingerprint: tool.fingerprint,
        catalogRevision: revision,
        strictAutoReview: true,
        // Each send waits for a human at most this long, then is sent again (re-attaching).
        waitMs: 20_000,
      },
    });
  });

  it.each([
    {
      name: "a denial with the service's message",
      result: { decision: "denied", source: "human", message: "user rejected MCP tool call" },
      message: "user rejected MCP tool call",
    },
    {
      name: "a denial by a hook with its reason",
      result: { decision: "denied", source: "hook", message: "blocked by policy hook" },
      message: "blocked by policy hook",
    },
    {
      name: "a cancelled approval",
      result: { decision: "abort", source: "human" },
      message: "user cancelled MCP tool call",
    },
    {
      name: "an approval nobody answered, in the reference's words (§4 step 5)",
      result: {
        decision: "timed_out",
        source: "timeout",
        message: "MCP tool call approval timed out after 600 s without an answer",
      },
      message:
        "The automatic permission approval review did not finish before its deadline. " +
        "Do not assume the action is unsafe based on the timeout alone. " +
        "You may retry once, or ask the user for guidance or explicit approval.",
    },
  ] as const)("[38 differs] skips the call on $name, server untouched", async (row) => {
    answer = () => approved(row.result);
    const callId = h.callId();
    const reply = await h.ok({ callId, tool: "mcp__scripted__asked", arguments: "{}" });
    expect({
      reply,
      events: phased(await h.endedEvents(callId)),
      serverCalls: await serverCallsFor(callId),
    }).toEqual({
      reply: notRunReply(reply, {
        callId,
        status: "skipped",
        server: "scripted",
        tool: "asked",
        hookName: "mcp__scripted__asked",
        error: row.message,
        catalogRevision: revision,
      }),
      events: lifecycle(
        { callId, invocation: { server: "scripted", tool: "asked", arguments: {} } },
        { status: "failed", durationMs: 0, result: { err: row.message } },
      ),
      serverCalls: [],
    });
  });

  it("names on the end event who answered the approval, beside who asked", async () => {
    answer = () => approved({ decision: "approved", source: "human", decidedBy: "oauth:rita" });
    const callId = h.callId();
    // The connector is told who asked too (a server isolated per principal runs it in theirs).
    const toConnector: Array<{ callId?: string; requestedBy?: string }> = [];
    const observer = h.nc.subscribe(h.subjects.connectorCall("scripted"), {
      callback: (_error, msg) => {
        toConnector.push(msg.json());
      },
    });
    await h.nc.flush();
    await h.ok({ callId, tool: "mcp__scripted__asked", arguments: "{}", requestedBy: "oauth:carl" });
    observer.unsubscribe();
    expect(toConnector.filter((body) => body.callId === callId).map((body) => body.requestedBy)).toEqual([
      "oauth:carl",
    ]);
    const bodies = (await h.endedEvents(callId)).map(({ body }) => body as Record<string, unknown>);
    // Begin is published before anyone answered; end names both.
    expect(bodies.map((body) => [body.requestedBy, body.decidedBy, body.status])).toEqual([
      ["oauth:carl", undefined, undefined],
      ["oauth:carl", "oauth:rita", "completed"],
    ]);
  });

  it("calls the server with a hook's rewritten arguments", async () => {
    answer = () => approved({ decision: "approved", source: "hook", updatedArguments: { q: "rewritten" } });
    const callId = h.callId();
    const reply = await h.ok({ callId, tool: "mcp__scripted__asked", arguments: '{"q":"original"}' });
    const [call] = await serverCallsFor(callId);
    expect({ sent: call?.arguments, result: reply.result }).toEqual({
      sent: { q: "rewritten" },
      result: { content: [{ type: "text", text: '{"q":"rewritten"}' }] },
    });
  });

  it("retries while the service answers server_unavailable, then runs the call once", async () => {
    let failures = 2;
    answer = () =>
      failures-- > 0
        ? {
            ok: false,
            error: {
              code: "server_unavailable",
              message: "the approvals replica is stopping",
              retryable: true,
            },
          }
        : approved({ decision: "approved", source: "human" });
    const asked = approvals.requests.length;
    const callId = h.callId();
    const reply = await h.ok({ callId, tool: "mcp__scripted__asked", arguments: "{}" });
    expect({
      status: reply.status,
      asked: approvals.requests.slice(asked).map(({ request }) => request.callId),
      serverCalls: (await serverCallsFor(callId)).length,
    }).toEqual({ status: "completed", asked: [callId, callId, callId], serverCalls: 1 });
  });

  it("settles mode `approve` itself: no request reaches the service", async () => {
    const asked = approvals.requests.length;
    const reply = await h.ok({ tool: "mcp__scripted__free", arguments: "{}" });
    expect({ status: reply.status, asked: approvals.requests.length - asked }).toEqual({
      status: "completed",
      asked: 0,
    });
  });

  it("denies, after a bounded retry, when no approvals service answers", async () => {
    approvals.stop();
    const callId = h.callId();
    const started = Date.now();
    // Bounded: the answer must come within the request's timeout. No upper bound on the clock,
    // which a loaded machine can stretch; the lower one says it retried (for about 5 s).
    const reply = await h.ok({ callId, tool: "mcp__scripted__asked", arguments: "{}" }, 20_000);
    const waitedMs = Date.now() - started;
    const message = `MCP tool call could not be approved: the approvals service did not answer (no service answers on ${h.subjects.approvalsDecide}; start the service that serves it (or check TOOLBUS_PREFIX))`;
    expect({
      reply,
      serverCalls: await serverCallsFor(callId),
      retried: waitedMs >= 3_000,
    }).toEqual({
      reply: notRunReply(reply, {
        callId,
        status: "skipped",
        server: "scripted",
        tool: "asked",
        hookName: "mcp__scripted__asked",
        error: message,
        catalogRevision: revision,
      }),
      serverCalls: [],
      retried: true,
    });
  });
});

describe("PostToolUse", () => {
  it("replaces what the model sees with a blocking hook's reason; the raw result stays", async () => {
    const post = await h.standIn<PostToolUseRequest>(h.subjects.approvalsPostToolUse, () => ({
      ok: true,
      result: { block: true, reason: "the output names a secret" },
    }));
    const callId = h.callId();
    const reply = await h.ok({
      callId,
      threadId: "thread-p",
      tool: "mcp__scripted__posted",
      arguments: '{"p":1}',
    });
    post.stop();
    expect({ reply, asked: post.requests.map(({ request }) => request) }).toEqual({
      reply: {
        callId,
        status: "completed",
        server: "scripted",
        tool: "posted",
        hookName: "mcp__scripted__posted",
        output: { success: false, body: "the output names a secret" },
        result: { content: [{ type: "text", text: '{"p":1}' }] },
        durationMs: reply.durationMs,
        wallTimeMs: reply.wallTimeMs,
        catalogRevision: revision,
      },
      asked: [
        {
          callId,
          threadId: "thread-p",
          hookName: "mcp__scripted__posted",
          toolInput: { p: 1 },
          toolResponse: { content: [{ type: "text", text: '{"p":1}' }] },
        },
      ],
    });
  });

  it("asks nothing for a tool no PostToolUse hook matches", async () => {
    const post = await h.standIn<PostToolUseRequest>(h.subjects.approvalsPostToolUse, () => ({
      ok: true,
      result: { block: true, reason: "must not be asked" },
    }));
    const reply = await h.ok({ tool: "mcp__scripted__free", arguments: '{"f":1}' });
    post.stop();
    expect({ output: reply.output, asked: post.requests.length }).toEqual({
      output: { success: true, body: textBody(reply, '[{"type":"text","text":"{\\"f\\":1}"}]') },
      asked: 0,
    });
  });
});

/**
 * A call that needs a human, end to end over the bus: decide waits, the request is listed and
 * announced, and each way of answering it (or not) reaches the waiting call.
 */

import { callDigestOf } from "@toolbus/policy";
import {
  ApprovalCancelResultSchema,
  type ApprovalRequest,
  type ApprovalResolvedEvent,
  ApprovalResolveResultSchema,
  WireError,
} from "@toolbus/protocol";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { decide, decideRequest, listPending, testEnv, waitForPending } from "./support.js";

const OPTIONS = {
  allow: { id: "allow", label: "Allow", description: "Run the tool and continue." },
  allowSession: {
    id: "allow_session",
    label: "Allow for this session",
    description: "Run the tool and remember this choice for this session.",
  },
  allowAlways: {
    id: "allow_always",
    label: "Allow and don't ask me again",
    description: "Run the tool and remember this choice for future tool calls.",
  },
  cancel: { id: "cancel", label: "Cancel", description: "Cancel this tool call." },
} as const;
const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

async function started(name: string, overrides = {}) {
  const env = await testEnv(name);
  const service = await env.start(overrides);
  const resolve = (requestId: string, choice: string) =>
    env.client.request(service.subjects.approvalsResolve, { requestId, choice }, ApprovalResolveResultSchema);
  return { env, service, subjects: service.subjects, client: env.client, resolve };
}

describe("a call put to a human", () => {
  it("waits, is listed with the full prompt, and is approved when the human allows it", async () => {
    const { client, subjects, resolve } = await started("allow", { timeoutMs: 60_000 });
    const request = decideRequest({ arguments: { q: "release notes", limit: 3 } });
    const decision = decide(client, subjects, request);

    const pending = await waitForPending(client, subjects, request.callId);
    expect(pending).toEqual({
      requestId: `mcp_tool_call_approval_${request.callId}`,
      callId: request.callId,
      threadId: "thread-1",
      server: "docs",
      tool: "search",
      hookName: "mcp__docs__search",
      header: "Approve app tool call?",
      question: 'Allow the docs MCP server to run tool "search"?',
      options: [OPTIONS.allow, OPTIONS.allowSession, OPTIONS.allowAlways, OPTIONS.cancel],
      arguments: { q: "release notes", limit: 3 },
      callDigest: callDigestOf(request),
      createdAt: ISO,
      expiresAt: ISO,
    } satisfies ApprovalRequest);
    expect(Date.parse(pending.expiresAt) - Date.parse(pending.createdAt)).toBe(60_000);

    await expect(resolve(pending.requestId, "allow")).resolves.toEqual({ decision: "approved" });
    await expect(decision).resolves.toEqual({ decision: "approved", source: "human", decidedBy: "user" });
    await expect(listPending(client, subjects)).resolves.toEqual([]);
  });

  it("announces the request on approvals.pending and the answer on approvals.resolved", async () => {
    const { client, subjects, resolve } = await started("events");
    const seen: Array<{ subject: string; body: unknown }> = [];
    const subs = [subjects.approvalsPending, subjects.approvalsResolved].map((subject) =>
      client.nc.subscribe(subject, {
        callback: (_err, msg) => {
          seen.push({ subject: msg.subject, body: msg.json() });
        },
      }),
    );
    await client.nc.flush();
    const request = decideRequest();
    const decision = decide(client, subjects, request);
    const pending = await waitForPending(client, subjects, request.callId);
    await resolve(pending.requestId, "decline");
    await decision;
    await expect.poll(() => seen.length).toBe(2);
    for (const sub of subs) sub.unsubscribe();
    expect(seen).toEqual([
      { subject: subjects.approvalsPending, body: pending },
      {
        subject: subjects.approvalsResolved,
        body: {
          requestId: pending.requestId,
          callId: request.callId,
          decision: "denied",
          by: "user",
        } satisfies ApprovalResolvedEvent,
      },
    ]);
  });

  it.each([
    [
      "decline",
      { decision: "denied", source: "human", decidedBy: "user", message: "user rejected MCP tool call" },
    ],
    [
      "cancel",
      { decision: "abort", source: "human", decidedBy: "user", message: "user cancelled MCP tool call" },
    ],
    ["allow_session", { decision: "approved_for_session", source: "human", decidedBy: "user" }],
    ["allow_always", { decision: "approved_always", source: "human", decidedBy: "user" }],
  ])("answers the waiting call with the decision the choice %s makes", async (choice, expected) => {
    const { client, subjects, resolve } = await started(`choice ${choice}`);
    const request = decideRequest();
    const decision = decide(client, subjects, request);
    const pending = await waitForPending(client, subjects, request.callId);
    await expect(resolve(pending.requestId, choice)).resolves.toEqual({ decision: expected.decision });
    await expect(decision).resolves.toEqual(expected);
  });

  it("refuses a second answer with bad_request naming the first decision", async () => {
    const { client, subjects, resolve } = await started("twice");
    const request = decideRequest();
    const decision = decide(client, subjects, request);
    const pending = await waitForPending(client, subjects, request.callId);
    await resolve(pending.requestId, "allow");
    await decision;
    const second = resolve(pending.requestId, "decline");
    await expect(second).rejects.toBeInstanceOf(WireError);
    await expect(second).rejects.toMatchObject({
      code: "bad_request",
      message: `approval request ${pending.requestId} was already resolved (approved); each request takes one answer`,
      retryable: false,
    });
  });

  it("refuses an answer for a request that does not exist", async () => {
    const { resolve } = await started("unknown");
    await expect(resolve("mcp_tool_call_approval_nope", "allow")).rejects.toMatchObject({
      code: "bad_request",
      message:
        "no approval request mcp_tool_call_approval_nope exists; list the pending requests (toolbus.approvals.list) for their ids",
    });
  });

  it("refuses a choice the request did not offer", async () => {
    const { client, subjects, resolve } = await started("not offered", {
      servers: { docs: { defaultToolsApprovalMode: "prompt" } },
    });
    const request = decideRequest();
    const decision = decide(client, subjects, request);
    const pending = await waitForPending(client, subjects, request.callId);
    expect(pending.options).toEqual([OPTIONS.allow, OPTIONS.cancel]);
    await expect(resolve(pending.requestId, "allow_session")).rejects.toMatchObject({
      code: "bad_request",
      message: `choice "allow_session" was not offered by approval request ${pending.requestId}; choose one of allow, cancel, decline`,
    });
    await resolve(pending.requestId, "allow");
    await expect(decision).resolves.toEqual({ decision: "approved", source: "human", decidedBy: "user" });
  });

  it("times out a request nobody answers, and then refuses a late answer as expired", async () => {
    const { client, subjects, resolve } = await started("timeout", { timeoutMs: 400 });
    const request = decideRequest();
    const started_ = Date.now();
    await expect(decide(client, subjects, request)).resolves.toEqual({
      decision: "timed_out",
      source: "timeout",
      message: "MCP tool call approval timed out after 0.4 s without an answer",
    });
    expect(Date.now() - started_).toBeGreaterThanOrEqual(400);
    await expect(listPending(client, subjects)).resolves.toEqual([]);
    const late = resolve(`mcp_tool_call_approval_${request.callId}`, "allow");
    await expect(late).rejects.toMatchObject({
      code: "bad_request",
      message: expect.stringMatching(
        new RegExp(
          `^approval request mcp_tool_call_approval_${request.callId} expired at .+; the call was not run, so retry the tool call to get a new request$`,
        ),
      ),
    });
  });

  it("withdraws a pending request on cancel, ending the waiting call, and cancels nothing twice", async () => {
    const { client, subjects } = await started("withdraw");
    const cancel = (callId: string) =>
      client.request(
        subjects.approvalsCancel,
        { callId, reason: "the client disconnected" },
        ApprovalCancelResultSchema,
      );
    const request = decideRequest();
    const decision = decide(client, subjects, request);
    await waitForPending(client, subjects, request.callId);
    await expect(cancel(request.callId)).resolves.toEqual({ cancelled: true });
    await expect(decision).resolves.toEqual({
      decision: "abort",
      source: "policy",
      message: "the approval request was withdrawn by its caller: the client disconnected",
    });
    await expect(cancel(request.callId)).resolves.toEqual({ cancelled: false });
    await expect(listPending(client, subjects)).resolves.toEqual([]);
  });

  it("resolves a request stored before the decision of each choice was stored with it", async () => {
    const { env, client, subjects, resolve } = await started("legacy request");
    const request = decideRequest();
    const decision = decide(client, subjects, request);
    const pending = await waitForPending(client, subjects, request.callId);
    const db = new pg.Client({ connectionString: env.databaseUrl });
    await db.connect();
    try {
      await db.query("UPDATE approval_requests SET decisions_by_choice = NULL WHERE request_id = $1", [
        pending.requestId,
      ]);
    } finally {
      await db.end();
    }
    await expect(resolve(pending.requestId, "allow_session")).resolves.toEqual({
      decision: "approved_for_session",
    });
    await expect(decision).resolves.toEqual({
      decision: "approved_for_session",
      source: "human",
      decidedBy: "user",
    });
    await expect(resolve(pending.requestId, "decline")).rejects.toThrow(
      `approval request ${pending.requestId} was already resolved (approved_for_session); each request takes one answer`,
    );
  });

  it("answers a decided call's retry at once with the same decision", async () => {
    const { client, subjects, resolve } = await started("retry decided");
    const request = decideRequest();
    const decision = decide(client, subjects, request);
    const pending = await waitForPending(client, subjects, request.callId);
    await resolve(pending.requestId, "allow");
    await decision;
    await expect(decide(client, subjects, request, 2_000)).resolves.toEqual({
      decision: "approved",
      source: "human",
      decidedBy: "user",
    });
  });
});

describe("a bounded wait (waitMs)", () => {
  it("answers timeout while the human has not answered, and the same callId sent again re-attaches to the same request", async () => {
    const { client, subjects, resolve } = await started("longpoll", { timeoutMs: 60_000 });
    const request = { ...decideRequest({ arguments: { q: "bounded" } }), waitMs: 300 };
    const first = await decide(client, subjects, request).then(
      () => "decided",
      (error: unknown) =>
        error instanceof WireError ? `${error.code} ${error.retryable}: ${error.message}` : String(error),
    );
    const requestId = `mcp_tool_call_approval_${request.callId}`;
    expect(first).toBe(
      `timeout true: ${requestId} is still waiting for a human; send decide again with the same callId to keep waiting for the same request`,
    );
    // Waiting again (as the dispatcher does), with the human answering meanwhile: the same request, approved.
    const again = decide(client, subjects, { ...request, waitMs: 30_000 });
    await waitForPending(client, subjects, request.callId);
    await resolve(requestId, "allow");
    expect(await again).toMatchObject({ decision: "approved", source: "human", decidedBy: "user" });
    expect((await listPending(client, subjects)).filter((p) => p.callId === request.callId)).toEqual([]);
  });
});

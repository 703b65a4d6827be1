/**
 * Remembered approvals end to end (checklist 39–41): "allow for this session" in the grants KV
 * bucket, "allow and don't ask me again" in Postgres, both bound to the tool's fingerprint, and
 * nothing remembered in modes prompt and writes.
 */
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ApprovalResolveResultSchema, ForgetThreadsResultSchema, type Subjects } from "@toolbus/protocol";
import pg from "pg";
import { describe, expect, it } from "vitest";
import {
  decide,
  decideRequest,
  hookScript,
  OTHER_FINGERPRINT,
  probe,
  type TestEnv,
  testEnv,
  waitForPending,
} from "./support.js";

const ALL_FOUR = ["allow", "allow_session", "allow_always", "cancel"];

/** A call put to a human and answered with `choice`; answers the call's decision. */
async function answer(env: TestEnv, subjects: Subjects, choice: string, overrides = {}) {
  const request = decideRequest(overrides);
  const decision = decide(env.client, subjects, request);
  const pending = await waitForPending(env.client, subjects, request.callId);
  await env.client.request(
    subjects.approvalsResolve,
    { requestId: pending.requestId, choice },
    ApprovalResolveResultSchema,
  );
  return decision;
}

describe("remembered approvals", () => {
  it("[39][42] after allow for this session, the same tool in the same thread runs with no prompt and no hooks", async () => {
    const env = await testEnv("session grant");
    const counter = join(await mkdtemp(join(tmpdir(), "toolbus-count-")), "runs");
    const hook = await hookScript("count.sh", `echo run >> ${counter}`);
    const service = await env.start({
      hooks: {
        PermissionRequest: [{ matcher: "mcp__docs__.*", hooks: [{ type: "command", command: hook }] }],
      },
    });
    const { subjects } = service;
    await expect(answer(env, subjects, "allow_session")).resolves.toEqual({
      decision: "approved_for_session",
      source: "human",
      decidedBy: "user",
    });
    const hookRuns = async () => (await readFile(counter, "utf8")).trim().split("\n").length;
    expect(await hookRuns()).toBe(1);

    await expect(probe(env.client, subjects, decideRequest())).resolves.toEqual({
      decided: { decision: "approved_for_session", source: "session" },
    });
    expect(await hookRuns()).toBe(1);

    const kv = await env.client.kvm().open(subjects.kv.approvalGrants);
    const entry = await kv.get("thread-1.docs.=.search");
    expect(entry?.json()).toEqual({
      fingerprint: "a".repeat(64),
      grantedAt: expect.any(String),
      requestId: expect.stringMatching(/^mcp_tool_call_approval_call-/),
    });

    await expect(probe(env.client, subjects, decideRequest({ threadId: "thread-2" }))).resolves.toEqual({
      prompted: ALL_FOUR,
    });
    await expect(
      probe(env.client, subjects, decideRequest({ fingerprint: OTHER_FINGERPRINT })),
    ).resolves.toEqual({
      prompted: ALL_FOUR,
    });
    expect(await hookRuns()).toBe(3);
  });

  it("end with their session: forget_threads deletes a thread's session grants, and its next call asks again", async () => {
    const env = await testEnv("forget threads");
    const { subjects } = await env.start();
    await answer(env, subjects, "allow_session");
    await answer(env, subjects, "allow_session", { threadId: "thread-2" });
    await answer(env, subjects, "allow_session", {
      threadId: "thread-2",
      tool: "fetch",
      hookName: "mcp__docs__fetch",
    });
    const forget = (threadIds: string[]) =>
      env.client.request(subjects.approvalsForgetThreads, { threadIds }, ForgetThreadsResultSchema);
    await expect(forget(["thread-2", "thread-3"])).resolves.toEqual({ forgotten: 2 });
    await expect(forget(["thread-2"])).resolves.toEqual({ forgotten: 0 });
    await expect(probe(env.client, subjects, decideRequest({ threadId: "thread-2" }))).resolves.toEqual({
      prompted: ALL_FOUR,
    });
    await expect(probe(env.client, subjects, decideRequest())).resolves.toEqual({
      decided: { decision: "approved_for_session", source: "session" },
    });
  });

  it("do not overrule a human's answer: a retry of a call put to a human waits for it though its tool was granted since", async () => {
    const env = await testEnv("grant after prompt");
    const { subjects } = await env.start();
    const request = decideRequest();
    const waiting = decide(env.client, subjects, request);
    const pending = await waitForPending(env.client, subjects, request.callId);
    await expect(answer(env, subjects, "allow_session")).resolves.toEqual({
      decision: "approved_for_session",
      source: "human",
      decidedBy: "user",
    });
    const retried = decide(env.client, subjects, request);
    await env.client.request(
      subjects.approvalsResolve,
      { requestId: pending.requestId, choice: "decline" },
      ApprovalResolveResultSchema,
    );
    const declined = {
      decision: "denied",
      source: "human",
      decidedBy: "user",
      message: "user rejected MCP tool call",
    };
    await expect(Promise.all([waiting, retried])).resolves.toEqual([declined, declined]);
  });

  it("[40 differs] after allow and don't ask me again, the tool runs in every thread, across restarts, until its definition changes", async () => {
    const env = await testEnv("always grant");
    const first = await env.start();
    await expect(answer(env, first.subjects, "allow_always")).resolves.toEqual({
      decision: "approved_always",
      source: "human",
      decidedBy: "user",
    });
    await expect(probe(env.client, first.subjects, decideRequest())).resolves.toEqual({
      decided: { decision: "approved_for_session", source: "session" },
    });
    await first.stop();

    const second = await env.start();
    await expect(
      probe(env.client, second.subjects, decideRequest({ threadId: "thread-9" })),
    ).resolves.toEqual({
      decided: { decision: "approved_always", source: "persistent" },
    });
    await expect(
      probe(env.client, second.subjects, decideRequest({ fingerprint: OTHER_FINGERPRINT })),
    ).resolves.toEqual({
      prompted: ALL_FOUR,
    });

    const db = new pg.Client({ connectionString: env.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query("SELECT grant_key, fingerprint FROM approval_grants");
      expect(rows).toEqual([{ grant_key: "docs.=.search", fingerprint: "a".repeat(64) }]);
    } finally {
      await db.end();
    }
  });

  it("[41] in modes prompt and writes an answer is never remembered: the next call asks again", async () => {
    const env = await testEnv("no memory");
    const service = await env.start({
      servers: {
        docs: { defaultToolsApprovalMode: "prompt" },
        notes: { defaultToolsApprovalMode: "writes" },
      },
    });
    for (const server of ["docs", "notes"]) {
      await expect(answer(env, service.subjects, "allow", { server })).resolves.toEqual({
        decision: "approved",
        source: "human",
        decidedBy: "user",
      });
      await expect(probe(env.client, service.subjects, decideRequest({ server }))).resolves.toEqual({
        prompted: ["allow", "cancel"],
      });
    }
  });
});

/**
 * An approval is bound to the call it approves (issue 12 item 3): a decide that reuses a callId
 * whose request was put to a human re-attaches only when its call is the same (server, raw tool,
 * fingerprint, arguments); any other call with that callId is refused as `bad_request`, before a
 * hook runs or anyone is asked, on this replica, after a restart, or on another replica.
 */
import { readFile, writeFile } from "node:fs/promises";
import { callDigestOf } from "@toolbus/policy";
import {
  type ApprovalRequest,
  ApprovalResolveResultSchema,
  callIdReusedMessage,
  WireError,
} from "@toolbus/protocol";
import pg from "pg";
import { describe, expect, it } from "vitest";
import {
  decide,
  decideRequest,
  hookScript,
  listPending,
  OTHER_FINGERPRINT,
  type TestEnv,
  testEnv,
  waitForPending,
} from "./support.js";

type Service = Awaited<ReturnType<TestEnv["start"]>>;

/** The error a refused decide rejects with, as a plain object to compare whole. */
async function refusal(decision: Promise<unknown>) {
  const error = await decision.then(
    () => undefined,
    (error: unknown) => error,
  );
  if (!(error instanceof WireError))
    throw new Error(`decide did not fail with a wire error: ${String(error)}`);
  return { code: error.code, retryable: error.retryable, message: error.message };
}

const reused = (callId: string) => ({
  code: "bad_request",
  retryable: false,
  message: callIdReusedMessage(callId),
});

/** A hook that appends each call's tool_input to a log and leaves the decision to the rest. */
async function recordingHook() {
  const log = `${await hookScript("log.sh", "true")}.log`;
  await writeFile(log, "");
  const path = await hookScript("record.sh", `cat >> ${log}; echo >> ${log}`);
  const runs = async () =>
    (await readFile(log, "utf8"))
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => (JSON.parse(line) as { tool_input: unknown }).tool_input);
  return { hooks: { PreToolUse: [{ hooks: [{ type: "command" as const, command: path }] }] }, runs };
}

async function allowed(env: TestEnv, service: Service, request = decideRequest()) {
  const decision = decide(env.client, service.subjects, request);
  const pending = await waitForPending(env.client, service.subjects, request.callId);
  await env.client.request(
    service.subjects.approvalsResolve,
    { requestId: pending.requestId, choice: "allow" },
    ApprovalResolveResultSchema,
  );
  await expect(decision).resolves.toEqual({ decision: "approved", source: "human", decidedBy: "user" });
  return { request, pending };
}

describe("a callId whose call was put to a human", () => {
  it("shows the human the digest the request is bound to", async () => {
    const env = await testEnv("binding shown");
    const service = await env.start();
    const request = decideRequest();
    const decision = decide(env.client, service.subjects, request);
    const pending = await waitForPending(env.client, service.subjects, request.callId);
    expect(pending.callDigest).toBe(callDigestOf(request));
    await env.client.request(
      service.subjects.approvalsResolve,
      { requestId: pending.requestId, choice: "cancel" },
      ApprovalResolveResultSchema,
    );
    await decision;
  });

  it.each([
    { change: "other arguments", with: { arguments: { q: "drop all tables" } } },
    { change: "another tool", with: { tool: "delete", hookName: "mcp__docs__delete" } },
    { change: "another server", with: { server: "wiki", hookName: "mcp__wiki__search" } },
    { change: "another tool version", with: { fingerprint: OTHER_FINGERPRINT } },
  ])(
    "refuses a reuse for $change once approved: no hook runs, no one is asked, nothing is approved",
    async (row) => {
      const env = await testEnv(`reuse ${row.change}`);
      const hook = await recordingHook();
      const service = await env.start({ hooks: hook.hooks });
      const { request } = await allowed(env, service);
      const announced: ApprovalRequest[] = [];
      const sub = env.client.nc.subscribe(service.subjects.approvalsPending, {
        callback: (_error, msg) => void announced.push(msg.json<ApprovalRequest>()),
      });
      await env.client.nc.flush();

      const refused = await refusal(decide(env.client, service.subjects, { ...request, ...row.with }));
      // A retry of the approved call itself still gets its answer.
      const retried = await decide(env.client, service.subjects, request, 5_000);
      sub.unsubscribe();
      expect({
        refused,
        retried,
        hookRuns: await hook.runs(),
        announced,
        pending: await listPending(env.client, service.subjects),
      }).toEqual({
        refused: reused(request.callId),
        retried: { decision: "approved", source: "human", decidedBy: "user" },
        hookRuns: [request.arguments],
        announced: [],
        pending: [],
      });
    },
  );

  it.each([
    { mode: "auto" as const, found: "by the lookup before the grants" },
    { mode: "prompt" as const, found: "by the insert of the new request" },
  ])(
    "refuses another call with the callId while the first still waits (mode $mode: $found)",
    async ({ mode }) => {
      const env = await testEnv(`reuse waiting ${mode}`);
      const service = await env.start({ servers: { docs: { defaultToolsApprovalMode: mode } } });
      const request = decideRequest();
      const first = decide(env.client, service.subjects, request);
      const pending = await waitForPending(env.client, service.subjects, request.callId);

      const refused = await refusal(
        decide(env.client, service.subjects, { ...request, arguments: { q: "something else" } }),
      );
      const listed = await listPending(env.client, service.subjects);
      await env.client.request(
        service.subjects.approvalsResolve,
        { requestId: pending.requestId, choice: "allow" },
        ApprovalResolveResultSchema,
      );
      expect({ refused, listed, first: await first }).toEqual({
        refused: reused(request.callId),
        listed: [pending],
        first: { decision: "approved", source: "human", decidedBy: "user" },
      });
    },
  );

  it("refuses a reuse after the service restarts and on another replica, while the same call re-attaches", async () => {
    const env = await testEnv("reuse restart");
    const first = await env.start();
    const { request } = await allowed(env, first);
    await first.stop();

    const replicas = [await env.start(), await env.start()];
    const other = { ...request, arguments: { q: "release notes", limit: 1000 } };
    // The queue group picks a replica at random; both must refuse, so ask several times.
    const refusals = await Promise.all(
      Array.from({ length: 6 }, () => refusal(decide(env.client, replicas[0]!.subjects, other))),
    );
    const retried = await decide(env.client, replicas[1]!.subjects, request, 5_000);
    expect({ refusals, retried }).toEqual({
      refusals: refusals.map(() => reused(request.callId)),
      retried: { decision: "approved", source: "human", decidedBy: "user" },
    });
  });

  it("a request stored before requests were bound answers no new decide, but is still listed and resolved", async () => {
    const env = await testEnv("legacy unbound");
    const service = await env.start();
    const request = decideRequest();
    const waiting = decide(env.client, service.subjects, request);
    const pending = await waitForPending(env.client, service.subjects, request.callId);
    const db = new pg.Client({ connectionString: env.databaseUrl });
    await db.connect();
    try {
      await db.query("UPDATE approval_requests SET call_digest = NULL WHERE request_id = $1", [
        pending.requestId,
      ]);
    } finally {
      await db.end();
    }

    const refused = await refusal(decide(env.client, service.subjects, request));
    const listed = await listPending(env.client, service.subjects);
    const resolved = await env.client.request(
      service.subjects.approvalsResolve,
      { requestId: pending.requestId, choice: "allow" },
      ApprovalResolveResultSchema,
    );
    expect({ refused, listed, resolved, waiting: await waiting }).toEqual({
      refused: {
        code: "bad_request",
        retryable: false,
        message: `callId ${JSON.stringify(request.callId)} has an approval request stored before requests were bound to their call, so it cannot be told apart from another call; this call did not run; send it with a new callId`,
      },
      listed: [pending],
      resolved: { decision: "approved" },
      waiting: { decision: "approved", source: "human", decidedBy: "user" },
    });
  });
});

/**
 * An approval is bound to the call it approves (issue 12 item 3), tried as an attack across the
 * real parts: the catalog and the MCP test server, the dispatcher (one or two replicas on one
 * prefix), the approvals service on Postgres, and a PreToolUse hook that records every run. A
 * callId approved by a human and sent again with other arguments is refused — by the dispatcher
 * that remembers it, and by the approvals service after a restart, on a dispatcher that does
 * not — and the server never sees it; a retry of the same call still re-attaches and runs once.
 */
import { chmod, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ApprovalRequest,
  type ApprovalResolveResult,
  callIdReusedMessage,
  type ToolCallReply,
} from "@toolbus/protocol";
import { withPgSchema } from "@toolbus/testkit";
import { provided } from "@toolbus/testkit/provided";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { notRunReply } from "./support/expect.js";
import { DispatchHarness, type Envelope, eventually } from "./support/harness.js";
import { type ServiceProcess, startServiceProcess } from "./support/processes.js";

let h: DispatchHarness;
let databaseUrl: string;
let approvals: ServiceProcess;
let hookLog: string;
let pending: ApprovalRequest[];
/** Every approvals process started, for their log lines across restarts. */
const approvalProcesses: ServiceProcess[] = [];
/** What the approvals service logs when a decide finds its call's request (REATTACHED). */
const REATTACHED = "decide re-attached to the call's approval request";

/** A PreToolUse hook that appends each call's `tool_input` to a log and leaves the decision to the human. */
async function recordingHook(): Promise<{ command: string; log: string }> {
  const dir = await mkdtemp(join(tmpdir(), "toolbus-binding-hook-"));
  const log = join(dir, "runs.log");
  const command = join(dir, "record.sh");
  await writeFile(log, "");
  await writeFile(command, `#!/bin/sh\ncat >> ${log}\necho >> ${log}\n`);
  await chmod(command, 0o755);
  return { command, log };
}

/** The approvals service as its own process on the harness's prefix and toolbus.toml (modes, hooks). */
async function startApprovals(): Promise<ServiceProcess> {
  const started = await startServiceProcess({
    service: "approvals",
    prefix: h.prefix,
    natsUrl: h.natsUrl,
    configPath: h.configPath,
    env: { DATABASE_URL: databaseUrl },
    args: ["--port", "0"],
    readyMessage: /^approvals inbox at /,
  });
  approvalProcesses.push(started);
  return started;
}

beforeAll(async () => {
  const hook = await recordingHook();
  hookLog = hook.log;
  h = await DispatchHarness.start({
    label: "approval-binding",
    script: { tools: [{ name: "transfer" }] },
    scriptedMode: "prompt",
    hooks: {
      hooks: {
        PreToolUse: [{ matcher: "mcp__scripted__.*", hooks: [{ type: "command", command: hook.command }] }],
      },
    },
  });
  const schema = await withPgSchema(provided().databaseUrl, "approval-binding");
  h.defer(() => schema.drop());
  databaseUrl = schema.url;
  approvals = await startApprovals();
  h.defer(() => approvals.stop());
  pending = await h.collect<ApprovalRequest>(h.subjects.approvalsPending);
}, 180_000);
afterAll(async () => h?.close());

const TOOL = "mcp__scripted__transfer";

/** What the hook saw, one tool_input per run, for one call's arguments or all. */
async function hookRuns(): Promise<unknown[]> {
  return (await readFile(hookLog, "utf8"))
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => (JSON.parse(line) as { tool_input: unknown }).tool_input);
}

const serverCallsFor = async (callId: string) =>
  (await h.scripted!.calls()).filter((call) => call._meta?.callId === callId).map((call) => call.arguments);

/** Waits for the call's request to reach the human, then answers it with `choice`. */
async function answer(callId: string, choice: "allow" | "cancel"): Promise<ApprovalRequest> {
  const request = await eventually(`the approval request of ${callId}`, () =>
    pending.find((candidate) => candidate.callId === callId),
  );
  const reply = await h.nc.request(
    h.subjects.approvalsResolve,
    JSON.stringify({ requestId: request.requestId, choice }),
    { timeout: 10_000 },
  );
  const envelope = reply.json<Envelope<ApprovalResolveResult>>();
  if (!envelope.ok) throw new Error(`resolve answered ${envelope.error.code}: ${envelope.error.message}`);
  return request;
}

/** A call a human allows: sent, answered, and completed. */
async function approvedCall(callId: string, args: string): Promise<ToolCallReply> {
  const reply = h.ok({ callId, tool: TOOL, arguments: args }, 30_000);
  await answer(callId, "allow");
  return reply;
}

/** The refusal a reused callId gets, from whichever part refused it. */
const refused = (reply: ToolCallReply, callId: string, route: boolean) =>
  notRunReply(reply, {
    callId,
    status: "failed",
    ...(route ? { server: "scripted", tool: "transfer", hookName: TOOL } : {}),
    error: callIdReusedMessage(callId),
    catalogRevision: reply.catalogRevision,
  });

describe("a callId approved by a human, sent again for another call", () => {
  it("is refused on the same dispatcher: the server sees one call, no hook or human is skipped", async () => {
    const callId = h.callId();
    const first = await approvedCall(callId, '{"to":"alice","amount":1}');
    const runsBefore = await hookRuns();
    const again = await h.ok({ callId, tool: TOOL, arguments: '{"to":"mallory","amount":1000}' });
    const runsAfterRefusal = await hookRuns();
    // The same arguments under a new callId go through the hook and the human again.
    const fresh = h.callId();
    const declined = h.ok({ callId: fresh, tool: TOOL, arguments: '{"to":"mallory","amount":1000}' });
    await answer(fresh, "cancel");
    expect({
      first: first.status,
      again,
      hookRunsAdded: runsAfterRefusal.slice(runsBefore.length),
      freshHookRun: (await hookRuns()).at(-1),
      fresh: (await declined).status,
      serverCalls: await serverCallsFor(callId),
      freshServerCalls: await serverCallsFor(fresh),
    }).toEqual({
      first: "completed",
      again: refused(again, callId, false),
      hookRunsAdded: [],
      freshHookRun: { to: "mallory", amount: 1000 },
      fresh: "skipped",
      serverCalls: [{ to: "alice", amount: 1 }],
      freshServerCalls: [],
    });
  });

  it("is refused after approvals restarts, on a second dispatcher that never saw the callId (the cluster's call ledger)", async () => {
    const callId = h.callId();
    const first = await approvedCall(callId, '{"to":"alice","amount":2}');
    const runsBefore = await hookRuns();
    await approvals.stop();
    approvals = await startApprovals();
    const second = await h.startReplica();
    // Only the second replica serves from here on: the first (which remembers the callId) drains.
    await h.dispatcher!.stop();
    h.dispatcher = second;
    const again = await h.ok({ callId, tool: TOOL, arguments: '{"amount":2000,"to":"mallory"}' });
    expect({
      first: first.status,
      again,
      hookRunsAdded: (await hookRuns()).slice(runsBefore.length),
      serverCalls: await serverCallsFor(callId),
    }).toEqual({
      first: "completed",
      // Refused before it is resolved: the dispatchers share the callId's record.
      again: refused(again, callId, false),
      hookRunsAdded: [],
      serverCalls: [{ to: "alice", amount: 2 }],
    });
  });
});

describe("a retry of the same call", () => {
  it("re-attaches to its request across an approvals restart, and the server runs it once", async () => {
    const callId = h.callId();
    const args = '{"to":"bob","amount":3}';
    const call = h.ok({ callId, tool: TOOL, arguments: args }, 30_000);
    const request = await eventually(`the approval request of ${callId}`, () =>
      pending.find((candidate) => candidate.callId === callId),
    );
    // A human takes a while (longer than the dispatcher's 5 s of retries for an unavailable
    // service), then the waiting decide is cut off: the dispatcher still sends it again, to the
    // restarted service.
    await new Promise((resolve) => setTimeout(resolve, 5_500));
    // The new replica is up before the old one stops (a rolling restart): the decide cut off by
    // the stop must find a replica within the dispatcher's 5 s, however slowly a process starts.
    const restarted = await startApprovals();
    await approvals.stop();
    approvals = restarted;
    // The caller retries too, keys in another order: the same call, the same reply.
    const retry = h.ok({ callId, tool: TOOL, arguments: '{"amount":3,"to":"bob"}' }, 30_000);
    await eventually("the dispatcher's decide to re-attach to the request", () =>
      approvalProcesses.some(({ logs }) =>
        logs.some((line) => line.msg === REATTACHED && line.requestId === request.requestId),
      )
        ? true
        : undefined,
    );
    await answer(callId, "allow");
    const [reply, retried] = await Promise.all([call, retry]);
    expect({
      status: reply.status,
      retried,
      announced: pending.filter((candidate) => candidate.callId === callId).length,
      hookRuns: (await hookRuns()).filter(
        (input) => JSON.stringify(input) === JSON.stringify({ to: "bob", amount: 3 }),
      ),
      serverCalls: await serverCallsFor(callId),
    }).toEqual({
      status: "completed",
      retried: reply,
      announced: 1,
      hookRuns: [{ to: "bob", amount: 3 }],
      serverCalls: [{ to: "bob", amount: 3 }],
    });
  });
});

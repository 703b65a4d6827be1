/**
 * The dispatcher decides from the policy the approvals service publishes (KV
 * `<prefix>_approval_policy`), over the real NATS: the approvals service runs as its own process
 * on Postgres, and each change of its configuration, published when it starts again, decides the
 * dispatcher's next call — settled locally when the policy alone settles it (no decide is sent),
 * put to the approvals service when a human is needed.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { POLICY_NEVER_MESSAGE } from "@toolbus/policy";
import type { ApprovalDecideRequest, ApprovalRequest, ApprovalResolveResult } from "@toolbus/protocol";
import { withPgSchema } from "@toolbus/testkit";
import { provided } from "@toolbus/testkit/provided";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { notRunReply } from "./support/expect.js";
import { DispatchHarness, type Envelope, eventually } from "./support/harness.js";
import { type ServiceProcess, startServiceProcess } from "./support/processes.js";

const TOOL = "mcp__scripted__transfer";
const PUBLISHED = "published the effective approval policy";
const FOLLOWING = "following the approval policy";

let h: DispatchHarness;
let databaseUrl: string;
let approvals: ServiceProcess | undefined;
let decides: ApprovalDecideRequest[];
let pending: ApprovalRequest[];

/** Sets the scripted server's `default_tools_approval_mode` in the shared toolbus.toml. */
function setMode(mode: "approve" | "prompt"): void {
  const toml = readFileSync(h.configPath, "utf8");
  writeFileSync(
    h.configPath,
    toml.replace(/"default_tools_approval_mode" = "[a-z]+"/, `"default_tools_approval_mode" = "${mode}"`),
  );
}

/**
 * (Re)starts the approvals service on the current toolbus.toml and `env`, and waits until the
 * dispatcher follows the policy it published: the revision approvals logs is the one the
 * dispatcher says it follows.
 */
async function restartApprovals(env: Record<string, string> = {}): Promise<number> {
  await approvals?.stop();
  approvals = await startServiceProcess({
    service: "approvals",
    prefix: h.prefix,
    natsUrl: h.natsUrl,
    configPath: h.configPath,
    env: { DATABASE_URL: databaseUrl, ...env },
    args: ["--port", "0"],
    readyMessage: /^approvals inbox at /,
  });
  const published = approvals.logs.find((line) => line.msg === PUBLISHED)?.policyRevision as number;
  await eventually(`the dispatcher to follow policy revision ${published}`, () =>
    h.dispatcher!.logs.some((line) => line.msg === FOLLOWING && line.policyRevision === published)
      ? true
      : undefined,
  );
  return published;
}

beforeAll(async () => {
  h = await DispatchHarness.start({
    label: "policy-follow",
    script: { tools: [{ name: "transfer" }] },
    scriptedMode: "approve",
    // Only the real approvals service publishes the policy here.
    standInPolicy: false,
  });
  const schema = await withPgSchema(provided().databaseUrl, "policy-follow");
  h.defer(() => schema.drop());
  databaseUrl = schema.url;
  h.defer(async () => approvals?.stop());
  // Every decide request, seen beside the approvals service's queue group.
  decides = await h.collect<ApprovalDecideRequest>(h.subjects.approvalsDecide);
  pending = await h.collect<ApprovalRequest>(h.subjects.approvalsPending);
}, 180_000);
afterAll(async () => h?.close());

const decidesFor = (callId: string) => decides.filter((request) => request.callId === callId).length;

describe("the dispatcher follows the policy the approvals service publishes", () => {
  it("decides each next call by the policy published last", async () => {
    // Mode `approve`: the dispatcher settles the call itself.
    const first = await restartApprovals();
    const approveId = h.callId();
    const approved = await h.ok({ callId: approveId, tool: TOOL, arguments: '{"amount":1}' });

    // Mode `prompt`, published by approvals on its restart: the next call goes to a human.
    setMode("prompt");
    const second = await restartApprovals();
    const promptId = h.callId();
    const prompted = h.ok({ callId: promptId, tool: TOOL, arguments: '{"amount":2}' }, 30_000);
    const request = await eventually(`the approval request of ${promptId}`, () =>
      pending.find((candidate) => candidate.callId === promptId),
    );
    const resolved = await h.nc.request(
      h.subjects.approvalsResolve,
      JSON.stringify({ requestId: request.requestId, choice: "allow" }),
      { timeout: 10_000 },
    );
    expect(resolved.json<Envelope<ApprovalResolveResult>>().ok).toBe(true);
    const humanApproved = await prompted;

    // Policy `never`, still mode `prompt`: nobody may be asked, so the dispatcher denies it itself.
    const third = await restartApprovals({ TOOLBUS_APPROVAL_POLICY: "never" });
    const neverId = h.callId();
    const denied = await h.ok({ callId: neverId, tool: TOOL, arguments: '{"amount":3}' });

    expect({
      revisions: second > first && third > second,
      approved: approved.status,
      approvedDecides: decidesFor(approveId),
      humanApproved: humanApproved.status,
      promptDecides: decidesFor(promptId) > 0,
      denied,
      deniedDecides: decidesFor(neverId),
      serverCalls: (await h.scripted!.calls()).map((call) => call.arguments),
    }).toEqual({
      revisions: true,
      approved: "completed",
      approvedDecides: 0,
      humanApproved: "completed",
      promptDecides: true,
      denied: notRunReply(denied, {
        callId: neverId,
        status: "skipped",
        server: "scripted",
        tool: "transfer",
        hookName: TOOL,
        error: POLICY_NEVER_MESSAGE,
        catalogRevision: denied.catalogRevision,
      }),
      deniedDecides: 0,
      serverCalls: [{ amount: 1 }, { amount: 2 }],
    });
  });
});

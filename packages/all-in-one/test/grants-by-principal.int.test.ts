/**
 * "Allow always" is the requester's alone: an approver allowing one caller's call for good does
 * not let another caller's calls of the tool run unasked (it did: the persistent grant named no
 * principal). A grant for everyone is an approver's (or admin's) answer with
 * `grantScope: "everyone"`; a caller can give none, of either scope.
 */
import type { ApprovalRequest } from "@toolbus/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Services, startServices, waitFor } from "./support/services.js";

const TOKENS = {
  alice: "alice-approves",
  carol: "carol-calls",
  dave: "dave-calls",
  erin: "erin-calls",
  root: "root-token",
};
let s: Services;
const pending: ApprovalRequest[] = [];

beforeAll(async () => {
  s = await startServices({
    label: "grants_by_principal",
    script: { tools: [{ name: "wipe" }, { name: "other" }] },
    // `auto`: asked, with "allow always" remembered.
    autoTools: ["wipe", "other"],
    principals: [
      { name: "alice", role: "approver", token: TOKENS.alice },
      { name: "carol", role: "caller", token: TOKENS.carol },
      { name: "dave", role: "caller", token: TOKENS.dave },
      { name: "erin", role: "caller", token: TOKENS.erin },
      { name: "root", role: "admin", token: TOKENS.root },
    ],
    inbox: true,
  });
  s.client.nc.subscribe(s.subjects.approvalsPending, {
    callback: (_error, msg) => void pending.push(msg.json<ApprovalRequest>()),
  });
  await s.client.nc.flush();
}, 120_000);

afterAll(async () => {
  await s?.stop();
});

let calls = 0;
/** A REST call of `tool` as `token`'s principal; resolves with its status once it ends. */
function callAs(token: string, tool = "wipe"): Promise<string> {
  calls += 1;
  return fetch(`${s.gateway.url}/v1/calls`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ callId: `grants-${calls}`, tool: `mcp__scripted__${tool}`, arguments: "{}" }),
  }).then(async (response) => ((await response.json()) as { status: string }).status);
}

function answer(requestId: string, token: string, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${s.gateway.url}/v1/approvals/${requestId}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
}

/** Calls as `token` and says whether a human was asked (and, when asked, lets `approver` answer with `body`). */
async function askedWhenCalling(
  token: string,
  answerWith?: { approver: string; body: Record<string, unknown> },
  tool = "wipe",
): Promise<{ asked: boolean; status: string }> {
  const before = pending.length;
  const call = callAs(token, tool);
  const outcome = await Promise.race([
    call.then((status) => ({ done: status })),
    waitFor("an approval request", () => pending.length > before).then(() => ({ done: undefined })),
  ]).catch(() => ({ done: undefined }));
  if (outcome.done !== undefined) return { asked: false, status: outcome.done };
  const request = pending[before]!;
  if (answerWith === undefined) throw new Error(`the call of ${tool} waits for an approval nobody gives`);
  const answered = await answer(request.requestId, answerWith.approver, answerWith.body);
  expect(answered.status, await answered.clone().text()).toBe(200);
  return { asked: true, status: await call };
}

describe("allow always, by principal", () => {
  it("an approver's 'allow always' for carol's call lets carol's later calls run unasked, and no one else's", async () => {
    expect(
      await askedWhenCalling(TOKENS.carol, { approver: TOKENS.alice, body: { choice: "allow_always" } }),
    ).toEqual({ asked: true, status: "completed" });
    expect(await askedWhenCalling(TOKENS.carol)).toEqual({ asked: false, status: "completed" });
    // Dave is asked: carol's grant is carol's.
    expect(
      await askedWhenCalling(TOKENS.dave, { approver: TOKENS.alice, body: { choice: "allow" } }),
    ).toEqual({ asked: true, status: "completed" });
  });

  it("an approver's 'allow always' for everyone lets every caller's calls run unasked", async () => {
    expect(
      await askedWhenCalling(
        TOKENS.dave,
        { approver: TOKENS.alice, body: { choice: "allow_always", grantScope: "everyone" } },
        "other",
      ),
    ).toEqual({ asked: true, status: "completed" });
    expect(await askedWhenCalling(TOKENS.erin, undefined, "other")).toEqual({
      asked: false,
      status: "completed",
    });
    expect(await askedWhenCalling(TOKENS.carol, undefined, "other")).toEqual({
      asked: false,
      status: "completed",
    });
  });

  it("lets approvers and admins answer with either scope, and no caller with any (every role × scope)", async () => {
    const roles = { approver: TOKENS.alice, admin: TOKENS.root, caller: TOKENS.carol };
    const statuses: Record<string, number> = {};
    for (const [role, token] of Object.entries(roles)) {
      for (const grantScope of ["requester", "everyone"]) {
        const before = pending.length;
        // Erin has no grant of `wipe` (carol's is carol's): each call asks.
        const call = callAs(TOKENS.erin);
        await waitFor("an approval request", () => pending.length > before);
        const request = pending[before]!;
        const response = await answer(request.requestId, token, { choice: "allow", grantScope });
        statuses[`${role} ${grantScope}`] = response.status;
        // Whoever could not answer, an approver does, so the call ends.
        if (response.status !== 200) await answer(request.requestId, TOKENS.alice, { choice: "decline" });
        await call;
      }
    }
    expect(statuses).toEqual({
      "approver requester": 200,
      "approver everyone": 200,
      "admin requester": 200,
      "admin everyone": 200,
      "caller requester": 403,
      "caller everyone": 403,
    });
  });

  it("refuses a grant scope it does not know, saying which there are", async () => {
    const before = pending.length;
    const call = callAs(TOKENS.erin);
    await waitFor("an approval request", () => pending.length > before);
    const request = pending[before]!;
    const refused = await answer(request.requestId, TOKENS.alice, {
      choice: "allow_always",
      grantScope: "all",
    });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain(
      'grantScope: Invalid option: expected one of "requester"|"everyone"',
    );
    await answer(request.requestId, TOKENS.alice, { choice: "decline" });
    await call;
  });
});

/**
 * Requests put to humans outlive the replica that asked: a decide waiting when its replica stops
 * is answered retryably, the dispatcher's retry (same callId) on a new instance re-attaches to the
 * same request, and an answer given anywhere reaches it. Several replicas ask a human once per call.
 */

import type { Bus } from "@toolbus/bus";
import { type ApprovalRequest, ApprovalResolveResultSchema, WireError } from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import { decide, decideRequest, listPending, testEnv, waitForPending } from "./support.js";

/** How many running approvals instances serve `subject` (micro-service INFO, so other tests' instances do not count). */
async function replicasServing(client: Bus, subject: string): Promise<number> {
  let count = 0;
  for await (const msg of await client.nc.requestMany("$SRV.INFO.approvals", "", {
    strategy: "timer",
    maxWait: 300,
  })) {
    const info = msg.json<{ endpoints: Array<{ subject: string }> }>();
    if (info.endpoints.some((endpoint) => endpoint.subject === subject)) count += 1;
  }
  return count;
}

describe("durability across restarts and replicas", () => {
  it("a waiting decide survives a restart: the retry re-attaches and gets the answer given after it", async () => {
    const env = await testEnv("restart waiting");
    const first = await env.start();
    const request = decideRequest();
    const waiting = decide(env.client, first.subjects, request).catch((error: unknown) => error);
    const pending = await waitForPending(env.client, first.subjects, request.callId);

    await first.stop();
    const interrupted = await waiting;
    expect(interrupted).toBeInstanceOf(WireError);
    expect(interrupted).toMatchObject({
      code: "server_unavailable",
      retryable: true,
      message: `this approvals replica is stopping while ${pending.requestId} waits for a human; send decide again with the same callId to keep waiting for the same request`,
    });

    const second = await env.start();
    const retried = decide(env.client, second.subjects, request);
    await expect
      .poll(() =>
        second.lines.some((line) => line.msg === "decide re-attached to the call's approval request"),
      )
      .toBe(true);
    await expect(listPending(env.client, second.subjects)).resolves.toEqual([pending]);
    await expect(
      env.client.request(
        second.subjects.approvalsResolve,
        { requestId: pending.requestId, choice: "allow" },
        ApprovalResolveResultSchema,
      ),
    ).resolves.toEqual({ decision: "approved" });
    await expect(retried).resolves.toEqual({ decision: "approved", source: "human", decidedBy: "user" });
  });

  it("a retry re-attaches after a restart with a new configuration, unless the tool is now approved by its mode", async () => {
    const env = await testEnv("restart reconfigured");
    const first = await env.start({ servers: { docs: { defaultToolsApprovalMode: "prompt" } } });
    const [prompted, unprompted] = [
      decideRequest(),
      decideRequest({ tool: "fetch", hookName: "mcp__docs__fetch" }),
    ];
    const waiting = [prompted, unprompted].map((request) =>
      decide(env.client, first.subjects, request).catch((error: unknown) => error),
    );
    const pending = await waitForPending(env.client, first.subjects, prompted.callId);
    await waitForPending(env.client, first.subjects, unprompted.callId);
    await first.stop();
    await Promise.all(waiting);

    const second = await env.start({
      servers: { docs: { defaultToolsApprovalMode: "auto", tools: { fetch: { approvalMode: "approve" } } } },
    });
    // Mode auto asks for grants first, and finds the request put to the human: it waits for that answer.
    const retried = decide(env.client, second.subjects, prompted);
    await expect
      .poll(() =>
        second.lines.some((line) => line.msg === "decide re-attached to the call's approval request"),
      )
      .toBe(true);
    // Mode approve settles the call by configuration alone, as a dispatcher evaluating it locally would.
    await expect(decide(env.client, second.subjects, unprompted, 5_000)).resolves.toEqual({
      decision: "approved",
      source: "mode",
    });
    await env.client.request(
      second.subjects.approvalsResolve,
      { requestId: pending.requestId, choice: "decline" },
      ApprovalResolveResultSchema,
    );
    await expect(retried).resolves.toEqual({
      decision: "denied",
      source: "human",
      decidedBy: "user",
      message: "user rejected MCP tool call",
    });
  });

  it("an answer given while no replica waits is there for the retry", async () => {
    const env = await testEnv("restart answered");
    const first = await env.start();
    const request = decideRequest();
    const waiting = decide(env.client, first.subjects, request).catch((error: unknown) => error);
    const pending = await waitForPending(env.client, first.subjects, request.callId);
    await first.stop();
    await waiting;

    const second = await env.start();
    await env.client.request(
      second.subjects.approvalsResolve,
      { requestId: pending.requestId, choice: "decline" },
      ApprovalResolveResultSchema,
    );
    await expect(decide(env.client, second.subjects, request, 2_000)).resolves.toEqual({
      decision: "denied",
      source: "human",
      decidedBy: "user",
      message: "user rejected MCP tool call",
    });
  });

  it("an answer given on one replica wakes the decide waiting on another", async () => {
    const env = await testEnv("cross replica");
    // A poll interval far longer than the test: only the Postgres notification can wake the waiter.
    const waiter = await env.start({ pollIntervalMs: 600_000 });
    const request = decideRequest();
    const waiting = decide(env.client, waiter.subjects, request);
    const pending = await waitForPending(env.client, waiter.subjects, request.callId);
    const other = await env.start({ pollIntervalMs: 600_000 });
    // The waiter stops taking requests (its decide stays in flight), so the answer goes to the other.
    const draining = waiter.bus.drain({ graceMs: 60_000 });
    await expect.poll(() => replicasServing(env.client, waiter.subjects.approvalsResolve)).toBe(1);
    await expect(
      env.client.request(
        other.subjects.approvalsResolve,
        { requestId: pending.requestId, choice: "allow" },
        ApprovalResolveResultSchema,
      ),
    ).resolves.toEqual({ decision: "approved" });
    expect(other.lines.filter((line) => line.msg === "answered resolve")).toHaveLength(1);
    expect(waiter.lines.filter((line) => line.msg === "answered resolve")).toHaveLength(0);
    await expect(waiting).resolves.toEqual({ decision: "approved", source: "human", decidedBy: "user" });
    await draining;
  });

  it("two replicas serving the same call ask the human once, and both answer with that decision", async () => {
    const env = await testEnv("two replicas");
    const replicas = [await env.start(), await env.start()];
    const { subjects } = replicas[0]!;
    const announced: ApprovalRequest[] = [];
    const sub = env.client.nc.subscribe(subjects.approvalsPending, {
      callback: (_err, msg) => {
        announced.push(msg.json<ApprovalRequest>());
      },
    });
    await env.client.nc.flush();
    const request = decideRequest();
    const served = (index: number) =>
      replicas[index]!.lines.some(
        (line) => line.callId === request.callId && line.subject === subjects.approvalsDecide,
      );
    // The queue group picks a replica at random: send the same call until both replicas hold one.
    const waiting = [decide(env.client, subjects, request)];
    await waitForPending(env.client, subjects, request.callId);
    for (let attempt = 0; attempt < 30 && !(served(0) && served(1)); attempt++) {
      waiting.push(decide(env.client, subjects, request));
      await expect
        .poll(() => replicas.flatMap((r) => r.lines).filter((l) => l.callId === request.callId).length)
        .toBeGreaterThan(0);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect([served(0), served(1)]).toEqual([true, true]);

    const pending = await listPending(env.client, subjects);
    expect(pending).toHaveLength(1);
    await env.client.request(
      subjects.approvalsResolve,
      { requestId: pending[0]!.requestId, choice: "allow" },
      ApprovalResolveResultSchema,
    );
    const decisions = await Promise.all(waiting);
    expect(decisions).toEqual(
      waiting.map(() => ({ decision: "approved", source: "human", decidedBy: "user" })),
    );
    sub.unsubscribe();
    expect(announced).toEqual(pending);
  });
});

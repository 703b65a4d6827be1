/**
 * Stale revisions (docs/contract.md "Stale revisions", checklist 29): a tool's definition changes
 * between the listing the model was shown and the call. The dispatcher rejects what it can see
 * is stale; a change racing in after its check is caught by the connector's barrier. Either
 * way the server never sees the call. Tools are in mode `prompt`, so a stand-in for the
 * approvals service shows whether a call got past the dispatcher's own check.
 */
import type { CatalogEvent, ToolCallReply } from "@toolbus/protocol";
import type { TestServerScript } from "@toolbus/testkit/mcp-test-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lifecycle, notRunReply, phased, textBody } from "./support/expect.js";
import { type ApprovalsStandIn, DispatchHarness, eventually } from "./support/harness.js";

const script = (version: number): TestServerScript => ({
  tools: [
    { name: "stable", description: "never changes" },
    { name: "changing", description: `version ${version}` },
  ],
});
const staleMessage = (tool: string) =>
  `tool call rejected because the catalog changed after \`scripted/${tool}\` was prepared`;

let h: DispatchHarness;
let version = 1;
let catalogEvents: CatalogEvent[];
/** What the approvals stand-in does before it approves; reset by each test. */
let beforeApproving: () => Promise<void> = async () => {};
let approvals: ApprovalsStandIn;

beforeAll(async () => {
  h = await DispatchHarness.start({ label: "stale", script: script(version), scriptedMode: "prompt" });
  catalogEvents = await h.collect<CatalogEvent>(h.subjects.catalogEvent);
  approvals = await h.approvals(async () => {
    await beforeApproving();
    return { decision: "approved", source: "human" };
  });
});
afterAll(async () => h?.close());

/** The server's revision as the dispatcher's own copy of the catalog has it. */
const replicaRevision = () => h.dispatcher!.service.catalog.server("scripted")?.revision ?? -1;

/** Changes `changing`'s definition and waits until the catalog and the dispatcher's copy show it. */
async function changeDefinition(): Promise<number> {
  const before = replicaRevision();
  version++;
  await h.scripted!.setScript(script(version));
  return eventually("the dispatcher's copy of the new revision", () =>
    replicaRevision() > before ? replicaRevision() : undefined,
  );
}

const callsTo = async (tool: string) => (await h.scripted!.calls()).filter((call) => call.tool === tool);

describe("at the dispatcher", () => {
  it.each([
    {
      name: "a call whose toolFingerprint is the changed tool's old one",
      tool: "changing",
      given: "fingerprint" as const,
      stale: true,
    },
    {
      name: "a call prepared against an older catalogRevision of the tool's server",
      tool: "changing",
      given: "revision" as const,
      stale: true,
    },
    {
      name: "a call to a sibling tool at an older revision: its server's tools changed",
      tool: "stable",
      given: "revision" as const,
      stale: true,
    },
    {
      name: "a call to a sibling tool by its unchanged fingerprint",
      tool: "stable",
      given: "fingerprint" as const,
      stale: false,
    },
    {
      name: "a call that names neither: served against the current catalog",
      tool: "changing",
      given: "nothing" as const,
      stale: false,
    },
  ])("[29] rejects or serves $name", async (row) => {
    const shown = await h.catalog();
    const entry = shown.tools.find((tool) => tool.rawName === row.tool)!;
    const newRevision = await changeDefinition();
    const asked = approvals.requests.length;
    const before = (await callsTo(row.tool)).length;
    const callId = h.callId();
    beforeApproving = async () => {};
    const reply = await h.ok({
      callId,
      tool: `mcp__scripted__${row.tool}`,
      arguments: '{"v":1}',
      ...(row.given === "fingerprint" ? { toolFingerprint: entry.fingerprint } : {}),
      ...(row.given === "revision" ? { catalogRevision: shown.revision } : {}),
    });
    const route = { server: "scripted", tool: row.tool, hookName: `mcp__scripted__${row.tool}` };
    const expected: ToolCallReply = row.stale
      ? notRunReply(reply, {
          callId,
          status: "skipped",
          ...route,
          error: staleMessage(row.tool),
          catalogRevision: newRevision,
        })
      : {
          callId,
          status: "completed",
          ...route,
          output: { success: true, body: textBody(reply, '[{"type":"text","text":"{\\"v\\":1}"}]') },
          result: { content: [{ type: "text", text: '{"v":1}' }] },
          durationMs: reply.durationMs,
          wallTimeMs: reply.wallTimeMs,
          catalogRevision: newRevision,
        };
    expect({
      reply,
      askedForApproval: approvals.requests.length - asked,
      serverCalls: (await callsTo(row.tool)).length - before,
      events: phased(await h.endedEvents(callId)),
    }).toEqual({
      reply: expected,
      askedForApproval: row.stale ? 0 : 1,
      serverCalls: row.stale ? 0 : 1,
      events: lifecycle(
        { callId, invocation: { server: "scripted", tool: row.tool, arguments: { v: 1 } } },
        row.stale
          ? { status: "failed", durationMs: 0, result: { err: staleMessage(row.tool) } }
          : { status: "completed", durationMs: reply.durationMs, result: { ok: reply.result! } },
      ),
    });
  });
});

describe("at the connector (the barrier)", () => {
  it("[29] rejects a call whose tool changed after the dispatcher's check, before the server sees it", async () => {
    const shown = await h.catalog();
    const entry = shown.tools.find((tool) => tool.rawName === "changing")!;
    const asked = approvals.requests.length;
    const before = (await callsTo("changing")).length;
    let changedTo = 0;
    // While the call waits for approval, the definition changes and the catalog moves on.
    beforeApproving = async () => {
      version++;
      await h.scripted!.setScript(script(version));
      changedTo = await eventually(
        "the catalog event of the change",
        () =>
          catalogEvents.find((event) => event.revision > entry.revision && event.changed.includes("scripted"))
            ?.revision,
      );
      await eventually("the bucket at the new revision", async () =>
        (await h.entry("scripted"))?.revision === changedTo ? true : undefined,
      );
    };
    const callId = h.callId();
    const reply = await h.ok({
      callId,
      tool: "mcp__scripted__changing",
      arguments: '{"v":2}',
      toolFingerprint: entry.fingerprint,
      catalogRevision: shown.revision,
    });
    beforeApproving = async () => {};
    expect({
      reply,
      // The dispatcher's check passed: it asked for approval with the fingerprint the model saw.
      asked: approvals.requests.slice(asked).map(({ request }) => ({
        callId: request.callId,
        fingerprint: request.fingerprint,
      })),
      serverCalls: (await callsTo("changing")).length - before,
      events: phased(await h.endedEvents(callId)),
      revisionMoved: changedTo > entry.revision,
    }).toEqual({
      reply: notRunReply(reply, {
        callId,
        status: "skipped",
        server: "scripted",
        tool: "changing",
        hookName: "mcp__scripted__changing",
        error: staleMessage("changing"),
        catalogRevision: shown.revision,
      }),
      asked: [{ callId, fingerprint: entry.fingerprint }],
      serverCalls: 0,
      events: lifecycle(
        { callId, invocation: { server: "scripted", tool: "changing", arguments: { v: 2 } } },
        { status: "failed", durationMs: 0, result: { err: staleMessage("changing") } },
      ),
      revisionMoved: true,
    });
  });

  it("lets the same call through when nothing changed while it waited", async () => {
    const shown = await h.catalog();
    const entry = shown.tools.find((tool) => tool.rawName === "changing")!;
    beforeApproving = async () => {
      await new Promise((resolve) => setTimeout(resolve, 100));
    };
    const reply = await h.ok({
      tool: "mcp__scripted__changing",
      arguments: '{"v":3}',
      toolFingerprint: entry.fingerprint,
      catalogRevision: shown.revision,
    });
    beforeApproving = async () => {};
    expect({ status: reply.status, result: reply.result }).toEqual({
      status: "completed",
      result: { content: [{ type: "text", text: '{"v":3}' }] },
    });
  });
});

/**
 * The call as the server sees it, through the dispatcher and the catalog: by the tool's raw name
 * whatever name the model used (docs/reference-behavior.md §3.3 step 7), and cut off after the
 * server's `tool_timeout_sec` with the reference's error text (§4 step 6).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorBody, lifecycle, phased } from "./support/expect.js";
import { DispatchHarness } from "./support/harness.js";

let h: DispatchHarness;
let revision: number;

beforeAll(async () => {
  h = await DispatchHarness.start({
    label: "server-call",
    script: {
      tools: [
        { name: "tool.two-three" },
        // Far past the timeout below: the call cannot finish in time, however loaded the machine.
        { name: "slow", behavior: { kind: "delay", ms: 60_000 } },
      ],
    },
    scriptedSettings: { tool_timeout_sec: 0.5 },
  });
  revision = (await h.catalog()).revision;
});
afterAll(async () => h?.close());

/** The server's calls that carry `callId`. */
const callsOf = async (callId: string) =>
  (await h.scripted!.calls()).filter((call) => call._meta?.callId === callId);

describe("the call the server receives", () => {
  it("[16] names `tool.two-three` as the server listed it when the model calls mcp__scripted__tool_two_three", async () => {
    const callId = h.callId();
    const reply = await h.ok({ callId, tool: "mcp__scripted__tool_two_three", arguments: '{"n":1}' });
    expect({
      status: reply.status,
      route: [reply.server, reply.tool, reply.hookName],
      received: (await callsOf(callId)).map((call) => call.tool),
    }).toEqual({
      status: "completed",
      route: ["scripted", "tool.two-three", "mcp__scripted__tool_two_three"],
      received: ["tool.two-three"],
    });
  });

  it("[30] ends a call the server does not answer within tool_timeout_sec as a `tool call error:` timeout", async () => {
    const callId = h.callId();
    const reply = await h.ok({ callId, tool: "mcp__scripted__slow", arguments: "{}" });
    const message =
      "tool call error: tool call failed for `scripted/slow`: timed out awaiting tools/call after 500ms";
    expect({
      reply: { ...reply, durationMs: 0, wallTimeMs: 0 },
      events: phased(await h.endedEvents(callId)),
      received: (await callsOf(callId)).length,
    }).toEqual({
      reply: {
        callId,
        status: "failed",
        server: "scripted",
        tool: "slow",
        hookName: "mcp__scripted__slow",
        output: { success: false, body: errorBody(reply, message) },
        error: message,
        durationMs: 0,
        wallTimeMs: 0,
        catalogRevision: revision,
      },
      events: lifecycle(
        { callId, invocation: { server: "scripted", tool: "slow", arguments: {} } },
        { status: "failed", durationMs: reply.durationMs, result: { err: message } },
      ),
      received: 1,
    });
  });
});

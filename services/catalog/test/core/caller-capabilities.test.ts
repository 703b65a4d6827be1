import { describe, expect, it } from "vitest";
import { CLIENT_CAPABILITIES } from "../../src/adapters/mcp/mcp-connection.js";
import { capabilitiesForServer } from "../../src/core/caller-capabilities.js";

describe("what a 2026-07-28 server is told the caller can answer", () => {
  it.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    ["nothing declared: nothing", {}, {}],
    ["sampling alone: sampling alone, no elicitation", { sampling: {} }, { sampling: {} }],
    ["elicitation {}: forms only", { elicitation: {} }, { elicitation: { form: {} } }],
    ["elicitation url: url only", { elicitation: { url: {} } }, { elicitation: { url: {} } }],
    ["sampling with tools", { sampling: { tools: {}, context: {} } }, { sampling: { tools: {} } }],
    [
      "roots: without list changes toolbus never relays",
      { roots: { listChanged: true } },
      { roots: { listChanged: false } },
    ],
    ["what toolbus cannot relay: dropped", { experimental: { x: {} }, tasks: {} }, {}],
  ])("%s", (_case, caller, told) => {
    expect(capabilitiesForServer(CLIENT_CAPABILITIES, caller)).toEqual(told);
  });
});

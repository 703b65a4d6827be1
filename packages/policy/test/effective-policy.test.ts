import { describe, expect, it } from "vitest";
import { POLICY_NEVER_MESSAGE } from "../src/decide.js";
import {
  type EffectivePolicyInput,
  EffectivePolicySchema,
  settledByPolicy,
} from "../src/effective-policy.js";
import type { DecideRequest } from "../src/types.js";

const NOW = Date.parse("2026-03-01T12:00:00.000Z");
const request: DecideRequest = {
  callId: "call-1",
  server: "docs",
  tool: "write",
  hookName: "mcp__docs__write",
  fingerprint: "f1",
  arguments: null,
  catalogRevision: 1,
};
const policyOf = (input: Partial<EffectivePolicyInput>) =>
  EffectivePolicySchema.parse({ timeoutMs: 600_000, ...input });

describe("the published policy", () => {
  it("fills every default a publisher leaves out, and drops fields it does not know", () => {
    expect(EffectivePolicySchema.parse({ timeoutMs: 1_000, addedLater: true })).toEqual({
      policy: "on-request",
      permissionProfile: "restricted",
      servers: {},
      hooks: { PreToolUse: [], PermissionRequest: [], PostToolUse: [] },
      timeoutMs: 1_000,
    });
  });

  it.each<{ name: string; policy: Partial<EffectivePolicyInput>; settled: unknown }>([
    {
      name: "a tool in mode approve, by its mode",
      policy: { servers: { docs: { tools: { write: { approvalMode: "approve" } } } } },
      settled: { decision: "approved", source: "mode" },
    },
    {
      name: "policy never with full access, by the policy",
      policy: { policy: "never", permissionProfile: "full-access" },
      settled: { decision: "approved", source: "policy" },
    },
    {
      name: "a call that would need a human under policy never, denied",
      policy: { policy: "never", servers: { docs: { defaultToolsApprovalMode: "prompt" } } },
      settled: { decision: "denied", source: "policy", message: POLICY_NEVER_MESSAGE },
    },
    {
      name: "nothing that needs a human (left to approvals)",
      policy: { servers: { docs: { defaultToolsApprovalMode: "prompt" } } },
      settled: undefined,
    },
    {
      name: "nothing a PreToolUse hook must see first, even in mode approve",
      policy: {
        servers: { docs: { defaultToolsApprovalMode: "approve" } },
        hooks: {
          PreToolUse: [{ matcher: "mcp__docs__.*", hooks: [{ type: "command", command: "./guard" }] }],
        },
      },
      settled: undefined,
    },
  ])("settles $name", ({ policy, settled }) => {
    expect(settledByPolicy(policyOf(policy), request, NOW)).toEqual(settled);
  });
});

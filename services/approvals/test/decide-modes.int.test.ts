/**
 * Approval modes and tool annotations end to end through `toolbus.approvals.decide`
 * (docs/reference-behavior.md §12, checklist 31–33): which calls run at once and which are put to a
 * human, with the modes read from the service's server table.
 */
import { describe, expect, it } from "vitest";
import { decideRequest, type Probe, probe, testEnv } from "./support.js";

const SERVERS = {
  approve: { defaultToolsApprovalMode: "approve" },
  prompt: { defaultToolsApprovalMode: "prompt" },
  writes: { defaultToolsApprovalMode: "writes" },
  auto: { defaultToolsApprovalMode: "auto" },
  mixed: {
    defaultToolsApprovalMode: "writes",
    tools: { reader: { approvalMode: "approve" }, asker: { approvalMode: "prompt" } },
  },
} as const;

const READ_ONLY = { readOnlyHint: true };
const WRITES = { readOnlyHint: false };
const ALL_FOUR = ["allow", "allow_session", "allow_always", "cancel"];
const ALLOW_CANCEL = ["allow", "cancel"];
const byMode: Probe = { decided: { decision: "approved", source: "mode" } };
const byAnnotations: Probe = { decided: { decision: "approved", source: "annotations" } };

interface Row {
  name: string;
  server: string;
  tool?: string;
  annotations?: Record<string, boolean>;
  expected: Probe;
}

async function check(name: string, rows: Row[]) {
  const env = await testEnv(name);
  const service = await env.start({ servers: SERVERS });
  const outcomes = await Promise.all(
    rows.map(async (row) => ({
      name: row.name,
      outcome: await probe(
        env.client,
        service.subjects,
        decideRequest({
          server: row.server,
          tool: row.tool ?? "search",
          hookName: `mcp__${row.server}__${row.tool ?? "search"}`,
          ...(row.annotations === undefined ? {} : { annotations: row.annotations }),
        }),
      ),
    })),
  );
  expect(outcomes).toEqual(rows.map((row) => ({ name: row.name, outcome: row.expected })));
}

describe("approval modes and annotations", () => {
  it("[31] approve never prompts, prompt always prompts, writes prompts unless the tool is read-only", async () => {
    await check("modes", [
      { name: "approve, no annotations", server: "approve", expected: byMode },
      {
        name: "approve, destructive",
        server: "approve",
        annotations: { destructiveHint: true },
        expected: byMode,
      },
      {
        name: "prompt, read-only",
        server: "prompt",
        annotations: READ_ONLY,
        expected: { prompted: ALLOW_CANCEL },
      },
      { name: "prompt, no annotations", server: "prompt", expected: { prompted: ALLOW_CANCEL } },
      { name: "writes, read-only", server: "writes", annotations: READ_ONLY, expected: byAnnotations },
      { name: "writes, writes", server: "writes", annotations: WRITES, expected: { prompted: ALLOW_CANCEL } },
      { name: "writes, no annotations", server: "writes", expected: { prompted: ALLOW_CANCEL } },
    ]);
  });

  it("[32] auto prompts without annotations, not for read-only, for destructive even if read-only, for writes in an open world", async () => {
    await check("annotations", [
      { name: "no annotations", server: "auto", expected: { prompted: ALL_FOUR } },
      { name: "read-only only", server: "auto", annotations: READ_ONLY, expected: byAnnotations },
      {
        name: "destructive and read-only",
        server: "auto",
        annotations: { readOnlyHint: true, destructiveHint: true },
        expected: { prompted: ALL_FOUR },
      },
      {
        name: "not read-only, open world absent",
        server: "auto",
        annotations: WRITES,
        expected: { prompted: ALL_FOUR },
      },
      {
        name: "not destructive, closed world",
        server: "auto",
        annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
        expected: byAnnotations,
      },
    ]);
  });

  it("[33] a tool's own mode wins over its server's default, which wins over auto", async () => {
    await check("mode resolution", [
      { name: "tool override approve", server: "mixed", tool: "reader", expected: byMode },
      {
        name: "tool override prompt",
        server: "mixed",
        tool: "asker",
        annotations: READ_ONLY,
        expected: { prompted: ALLOW_CANCEL },
      },
      {
        name: "server default writes",
        server: "mixed",
        tool: "other",
        annotations: READ_ONLY,
        expected: byAnnotations,
      },
      {
        name: "server default writes, writing",
        server: "mixed",
        tool: "other",
        expected: { prompted: ALLOW_CANCEL },
      },
      { name: "unconfigured server is auto", server: "elsewhere", expected: { prompted: ALL_FOUR } },
    ]);
  });

  it("[34] denies a call that needs a human when the policy is never, without asking anyone", async () => {
    const env = await testEnv("policy never");
    const service = await env.start({ servers: SERVERS, policy: "never" });
    await expect(probe(env.client, service.subjects, decideRequest({ server: "prompt" }))).resolves.toEqual({
      decided: {
        decision: "denied",
        source: "policy",
        message: "MCP tool call requires approval, but approval policy is never",
      },
    });
    await expect(probe(env.client, service.subjects, decideRequest({ server: "approve" }))).resolves.toEqual(
      byMode,
    );
  });
});

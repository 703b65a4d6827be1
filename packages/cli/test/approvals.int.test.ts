/**
 * `toolbus approvals` against a stand-in for the approvals service's human side (list,
 * resolve, pending and resolved events as docs/contract.md "Approvals" defines them); the CLI runs
 * as a child process on the real NATS.
 */
import { isolation } from "@toolbus/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type ApprovalsStandIn,
  approvalRequest,
  startApprovalsStandIn,
} from "./support/approvals-stand-in.js";
import { type CliEnv, LiveCli, runCli, spawnCli } from "./support/run-cli.js";
import { natsUrl } from "./support/toolbus-stack.js";

let standIn: ApprovalsStandIn;
let env: CliEnv;

beforeEach(async () => {
  env = { natsUrl: natsUrl(), prefix: isolation("cli_approvals").prefix };
  standIn = await startApprovalsStandIn(env.natsUrl, env.prefix);
});

afterEach(async () => {
  await standIn.close();
});

describe("toolbus approvals", () => {
  it("lists the pending requests as a table", async () => {
    standIn.add(approvalRequest("call-1"));
    const result = await runCli(["approvals"], env);
    const [header, row, ...rest] = result.stdout.split("\n");
    expect({
      code: result.code,
      header: header?.trim().split(/ {2,}/),
      row: row?.trim().split(/ {2,}/),
      rest,
    }).toEqual({
      code: 0,
      header: ["requestId", "server", "tool", "arguments", "expires"],
      row: [
        "mcp_tool_call_approval_call-1",
        "files",
        "delete",
        '{"path":"/tmp/x"}',
        expect.stringMatching(/^in \d/),
      ],
      rest: [""],
    });
  });

  it("prints the pending requests as JSON with --json", async () => {
    const request = approvalRequest("call-2");
    standIn.add(request);
    const result = await runCli(["approvals", "--json"], env);
    expect({ code: result.code, pending: JSON.parse(result.stdout) }).toEqual({
      code: 0,
      pending: [request],
    });
  });

  it("lists every pending request, however many pages the service answers them in", async () => {
    // The stand-in answers pages of two.
    const requests = ["p-1", "p-2", "p-3", "p-4", "p-5"].map((callId) => approvalRequest(callId));
    for (const request of requests) standIn.add(request);
    const result = await runCli(["approvals", "--json"], env);
    expect({ code: result.code, pending: JSON.parse(result.stdout) }).toEqual({ code: 0, pending: requests });
  });

  it("answers a request named by its callId and prints the decision", async () => {
    standIn.add(approvalRequest("call-3"));
    const result = await runCli(["approvals", "answer", "call-3", "allow_session", "--json"], env);
    expect({ code: result.code, out: JSON.parse(result.stdout), resolved: standIn.resolved }).toEqual({
      code: 0,
      out: {
        requestId: "mcp_tool_call_approval_call-3",
        choice: "allow_session",
        decision: "approved_for_session",
      },
      resolved: [{ requestId: "mcp_tool_call_approval_call-3", choice: "allow_session" }],
    });
  });

  it("exits 1 with the service's message when the request was already answered", async () => {
    const result = await runCli(["approvals", "answer", "mcp_tool_call_approval_gone", "decline"], env);
    expect(result).toEqual({
      code: 1,
      stdout: "",
      stderr: "toolbus: approval request mcp_tool_call_approval_gone was already resolved (bad_request)\n",
    });
  });

  it("rejects a choice that does not exist as a usage error", async () => {
    const result = await runCli(["approvals", "answer", "call-4", "maybe"], env);
    expect({ code: result.code, first: result.stderr.split("\n")[0] }).toEqual({
      code: 2,
      first:
        'toolbus: "maybe" is not a choice; answer one of a (allow), s (allow_session), p (allow_always), d (decline), c (cancel)',
    });
  });

  it("exits 3 when no approvals service answers, naming the NATS it tried", async () => {
    const { prefix } = isolation("cli_noapprovals");
    const result = await runCli(["approvals"], { ...env, prefix });
    expect({
      code: result.code,
      mentions: result.stderr.includes(
        `nothing answers on ${prefix}.approvals.list at ${env.natsUrl}: no toolbus approvals service runs there`,
      ),
    }).toEqual({
      code: 3,
      mentions: true,
    });
  });
});

describe("toolbus approvals --watch", { timeout: 60_000 }, () => {
  it("shows waiting and newly arriving requests and resolves each with the answer typed", async () => {
    standIn.add(approvalRequest("early"));
    const watch = new LiveCli(spawnCli(["approvals", "--watch"], env));
    await watch.waitFor("the first prompt", (o) => o.stderr.includes("choice> "));
    watch.child.stdin.write("p\n"); // allow_always: this request does not offer it
    await watch.waitFor("the refusal", (o) => o.stderr.includes("allow_always is not offered"));
    watch.child.stdin.write("a\n");
    await watch.waitFor("the waiting note", (o) => o.stderr.includes("Waiting for approval requests"));
    standIn.add(approvalRequest("late"));
    await watch.waitFor("the second prompt", (o) =>
      o.stdout.includes("mcp_tool_call_approval_late  (expires"),
    );
    watch.child.stdin.write("decline\n");
    await watch.waitFor("the second decision", (o) =>
      o.stdout.includes("mcp_tool_call_approval_late: denied"),
    );
    watch.child.stdin.end();
    const prompt = (callId: string) => [
      "",
      "Approve app tool call?",
      'Allow the files MCP server to run tool "delete"?',
      '  arguments: {"path":"/tmp/x"}',
      `  request:   mcp_tool_call_approval_${callId}  (expires in …)`,
      "  [a] Allow  [s] Allow for this session  [d] Decline  [c] Cancel",
    ];
    expect({
      code: await watch.exited,
      resolved: standIn.resolved,
      stdout: watch.stdout.replace(/\(expires in [^)]+\)/g, "(expires in …)"),
    }).toEqual({
      code: 0,
      resolved: [
        { requestId: "mcp_tool_call_approval_early", choice: "allow" },
        { requestId: "mcp_tool_call_approval_late", choice: "decline" },
      ],
      stdout: [
        ...prompt("early"),
        "mcp_tool_call_approval_early: approved",
        ...prompt("late"),
        "mcp_tool_call_approval_late: denied",
        "",
      ].join("\n"),
    });
  });

  it("drops the request on screen when someone else answers it", async () => {
    standIn.add(approvalRequest("elsewhere"));
    const watch = new LiveCli(spawnCli(["approvals", "--watch", "--json"], env));
    await watch.waitFor("the prompt", (o) => o.stderr.includes("choice> "));
    standIn.resolveElsewhere("mcp_tool_call_approval_elsewhere", "denied", "inbox");
    await watch.waitFor("the note", (o) => o.stderr.includes("answered elsewhere"));
    watch.child.stdin.end();
    const lines = watch.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { event: string });
    expect({
      code: await watch.exited,
      events: lines.map((line) => line.event),
      note: watch.stderr.includes(
        "mcp_tool_call_approval_elsewhere was answered elsewhere: denied (by inbox)",
      ),
      resolved: standIn.resolved,
    }).toEqual({ code: 0, events: ["pending"], note: true, resolved: [] });
  });
});

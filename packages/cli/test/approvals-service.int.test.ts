/**
 * `toolbus call` and `toolbus approvals` against the real approvals service: the server's
 * tools need a human (`always_ask`, the alias of `prompt`), so a call waits until the CLI
 * answers its request.
 */
import { ApprovalsListResultSchema } from "@toolbus/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type CliEnv, LiveCli, runCli, spawnCli } from "./support/run-cli.js";
import { startToolbusStack, type ToolbusStack } from "./support/toolbus-stack.js";

const ApprovalsListReplySchema = z.object({ ok: z.literal(true), result: ApprovalsListResultSchema });

let stack: ToolbusStack;
let env: CliEnv;

beforeAll(async () => {
  // By the mode's name that says what it does: the approvals service reads it as `prompt`.
  stack = await startToolbusStack(
    "cli_prompt",
    { tools: [{ name: "echo" }] },
    { approvalMode: "always_ask" },
  );
  env = { natsUrl: stack.natsUrl, prefix: stack.prefix };
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

/** The callId of the one request waiting, once there is one (asked on the bus, not through the CLI). */
async function waitingCallId(): Promise<string> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const reply = await stack.nc.request(`${stack.prefix}.approvals.list`, "{}");
    const { result } = ApprovalsListReplySchema.parse(reply.json());
    if (result.pending[0]) return result.pending[0].callId;
    if (Date.now() > deadline) throw new Error("no approval request appeared within 15 s");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("a call that needs a human", { timeout: 60_000 }, () => {
  it("runs once `approvals --watch` allows it, and the call exits 0", async () => {
    const call = new LiveCli(spawnCli(["call", "mcp__test__echo", '{"x":1}'], env));
    const watch = new LiveCli(spawnCli(["approvals", "--watch"], env));
    await watch.waitFor("the prompt", (o) => o.stderr.includes("choice> "), 20_000);
    watch.child.stdin.write("a\n");
    await watch.waitFor("the decision", (o) => /mcp_tool_call_approval_cli-\S+: approved/.test(o.stdout));
    watch.child.stdin.end();
    expect({
      watch: await watch.exited,
      call: await call.exited,
      output: call.stdout,
      question: watch.stdout.includes('Allow the test MCP server to run tool "echo"?'),
    }).toEqual({
      watch: 0,
      call: 0,
      output: '{"x":1}\n',
      question: true,
    });
  });

  it("is refused when `approvals answer` declines it, and the call exits 1", async () => {
    const call = new LiveCli(spawnCli(["call", "mcp__test__echo", '{"x":2}'], env));
    const callId = await waitingCallId();
    const answer = await runCli(["approvals", "answer", callId, "decline"], env);
    const again = await runCli(["approvals", "answer", callId, "decline"], env);
    expect({
      answer: answer.stdout,
      again: { code: again.code, refused: again.stderr.includes("(bad_request)") },
      call: await call.exited,
      stderr: call.stderr,
    }).toEqual({
      answer: `mcp_tool_call_approval_${callId}: denied\n`,
      again: { code: 1, refused: true },
      call: 1,
      stderr:
        "toolbus: test__echo is awaiting approval: answer with `toolbus approvals` or in the inbox (/approvals)\n" +
        "toolbus: the call was not made: user rejected MCP tool call\n",
    });
  });
});

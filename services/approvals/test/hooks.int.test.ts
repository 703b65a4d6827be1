/**
 * Hooks end to end through decide and post_tool_use, with real hook scripts (checklist 42):
 * PermissionRequest allow/deny, PreToolUse allow, deny by exit code 2, input rewrites, a hook that
 * times out failing closed, an HTTP hook, and PostToolUse blocking.
 */
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { HooksConfig } from "@toolbus/policy";
import { ApprovalResolveResultSchema, PostToolUseResultSchema } from "@toolbus/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { decide, decideRequest, hookScript, probe, testEnv, waitForPending } from "./support.js";

type HookEvents = Partial<HooksConfig>;

async function withHooks(name: string, hooks: HookEvents, overrides = {}) {
  const env = await testEnv(name);
  const service = await env.start({ hooks, ...overrides });
  return { env, client: env.client, subjects: service.subjects };
}

const command = (path: string, timeout?: number) => ({
  type: "command" as const,
  command: path,
  ...(timeout === undefined ? {} : { timeout }),
});

describe("PermissionRequest hooks", () => {
  it("[42] a hook that allows skips the human", async () => {
    const hook = await hookScript(
      "allow.sh",
      `echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}'`,
    );
    const { client, subjects } = await withHooks("permission allow", {
      PermissionRequest: [{ matcher: "mcp__docs__search", hooks: [command(hook)] }],
    });
    await expect(probe(client, subjects, decideRequest())).resolves.toEqual({
      decided: { decision: "approved", source: "hook" },
    });
  });

  it("[42] a hook that denies skips the call with the hook's message", async () => {
    const hook = await hookScript(
      "deny.sh",
      `echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"search is off limits today"}}}'`,
    );
    const { client, subjects } = await withHooks("permission deny", {
      PermissionRequest: [{ hooks: [command(hook)] }],
    });
    await expect(probe(client, subjects, decideRequest())).resolves.toEqual({
      decided: { decision: "denied", source: "hook", message: "search is off limits today" },
    });
  });

  it("does not run for a tool its matcher does not select", async () => {
    const hook = await hookScript("deny.sh", "echo nope >&2; exit 2");
    const { client, subjects } = await withHooks("matcher", {
      PermissionRequest: [{ matcher: "mcp__other__.*", hooks: [command(hook)] }],
    });
    await expect(probe(client, subjects, decideRequest())).resolves.toEqual({
      prompted: ["allow", "allow_session", "allow_always", "cancel"],
    });
  });
});

describe("PreToolUse hooks", () => {
  it("allow the call outright when they answer allow", async () => {
    const hook = await hookScript(
      "allow.sh",
      `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'`,
    );
    const { client, subjects } = await withHooks("pre allow", { PreToolUse: [{ hooks: [command(hook)] }] });
    await expect(probe(client, subjects, decideRequest())).resolves.toEqual({
      decided: { decision: "approved", source: "hook" },
    });
  });

  it("deny the call with their stderr as the reason when they exit with code 2", async () => {
    const hook = await hookScript(
      "block.sh",
      "cat > /dev/null; echo 'queries about releases are blocked' >&2; exit 2",
    );
    const { client, subjects } = await withHooks("pre exit 2", { PreToolUse: [{ hooks: [command(hook)] }] });
    await expect(probe(client, subjects, decideRequest())).resolves.toEqual({
      decided: { decision: "denied", source: "hook", message: "queries about releases are blocked" },
    });
  });

  it("read the call on stdin in Claude Code's shape", async () => {
    const out = join(await mkdtemp(join(tmpdir(), "toolbus-stdin-")), "payload.json");
    const hook = await hookScript("record.sh", `cat > ${out}`);
    const { client, subjects } = await withHooks("pre stdin", { PreToolUse: [{ hooks: [command(hook)] }] });
    const request = decideRequest();
    await probe(client, subjects, request);
    expect(JSON.parse(await readFile(out, "utf8"))).toEqual({
      session_id: "thread-1",
      hook_event_name: "PreToolUse",
      tool_name: "mcp__docs__search",
      tool_input: { q: "release notes" },
      tool_use_id: request.callId,
    });
  });

  it("rewrite the input: the decision carries updatedArguments", async () => {
    const hook = await hookScript(
      "rewrite.sh",
      `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"q":"release notes","limit":5}}}'`,
    );
    const { client, subjects } = await withHooks("pre rewrite", { PreToolUse: [{ hooks: [command(hook)] }] });
    await expect(probe(client, subjects, decideRequest())).resolves.toEqual({
      decided: { decision: "approved", source: "hook", updatedArguments: { q: "release notes", limit: 5 } },
    });
  });

  it("that ask with a rewrite show the human the rewritten input, and the approval carries it", async () => {
    const hook = await hookScript(
      "ask.sh",
      `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","updatedInput":{"q":"redacted"}}}'`,
    );
    const { client, subjects } = await withHooks(
      "pre ask",
      { PreToolUse: [{ hooks: [command(hook)] }] },
      {
        servers: { docs: { defaultToolsApprovalMode: "approve" } },
      },
    );
    const request = decideRequest();
    const decision = decide(client, subjects, request);
    const pending = await waitForPending(client, subjects, request.callId);
    expect(pending.arguments).toEqual({ q: "redacted" });
    await client.request(
      subjects.approvalsResolve,
      { requestId: pending.requestId, choice: "allow" },
      ApprovalResolveResultSchema,
    );
    await expect(decision).resolves.toEqual({
      decision: "approved",
      source: "human",
      decidedBy: "user",
      updatedArguments: { q: "redacted" },
    });
  });

  it("that ask with a rewrite too large to travel with the wake-up still release the call when answered", async () => {
    const text = "x".repeat(9_000);
    const hook = await hookScript(
      "ask-large.sh",
      `printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","updatedInput":{"q":"%s"}}}' "$(head -c 9000 /dev/zero | tr '\\0' x)"`,
    );
    const { client, subjects } = await withHooks(
      "pre ask large",
      { PreToolUse: [{ hooks: [command(hook)] }] },
      // A poll far longer than the test: only the wake-up can release the waiting call.
      { servers: { docs: { defaultToolsApprovalMode: "approve" } }, pollIntervalMs: 600_000 },
    );
    const request = decideRequest();
    const decision = decide(client, subjects, request);
    const pending = await waitForPending(client, subjects, request.callId);
    expect(pending.arguments).toEqual({ q: text });
    await client.request(
      subjects.approvalsResolve,
      { requestId: pending.requestId, choice: "allow" },
      ApprovalResolveResultSchema,
    );
    await expect(decision).resolves.toEqual({
      decision: "approved",
      source: "human",
      decidedBy: "user",
      updatedArguments: { q: text },
    });
  });

  it("deny the call when a hook times out (fail closed), without waiting for it", async () => {
    // Longer than the test's timeout: a decision that waited for the hook fails the test, no clock needed.
    const hook = await hookScript("slow.sh", "sleep 120");
    const { client, subjects } = await withHooks("pre timeout", {
      PreToolUse: [{ hooks: [command(hook, 0.5)] }],
    });
    await expect(probe(client, subjects, decideRequest())).resolves.toEqual({
      decided: { decision: "denied", source: "hook", message: `hook "${hook}" timed out after 0.5 s` },
    });
  });

  it("deny the call, naming the limit, when every command hook slot stays busy for the hook's whole timeout", async () => {
    const dir = await mkdtemp(join(tmpdir(), "toolbus-slots-"));
    const hold = await hookScript(
      "hold.sh",
      `touch ${dir}/started; while [ ! -e ${dir}/go ]; do sleep 0.05; done
echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'`,
    );
    const quick = await hookScript("quick.sh", `touch ${dir}/quick-ran`);
    const { client, subjects } = await withHooks(
      "pre slots",
      {
        PreToolUse: [
          { matcher: "mcp__docs__hold", hooks: [command(hold, 30)] },
          { matcher: "mcp__docs__search", hooks: [command(quick, 0.5)] },
        ],
      },
      { maxConcurrentHooks: 1 },
    );
    const held = decide(client, subjects, decideRequest({ tool: "hold", hookName: "mcp__docs__hold" }));
    await expect
      .poll(() =>
        readFile(`${dir}/started`).then(
          () => true,
          () => false,
        ),
      )
      .toBe(true);

    await expect(probe(client, subjects, decideRequest())).resolves.toEqual({
      decided: {
        decision: "denied",
        source: "hook",
        message:
          `hook "${quick}" failed to run: toolbus did not start it: all 1 command hook slots ` +
          "(`[approvals] max_concurrent_hooks`) stayed busy for its whole 0.5 s timeout; " +
          "raise the limit or make the hooks faster",
      },
    });
    await expect(readFile(`${dir}/quick-ran`)).rejects.toThrow("ENOENT");
    await writeFile(`${dir}/go`, "");
    await expect(held).resolves.toEqual({ decision: "approved", source: "hook" });
  });
});

describe("HTTP hooks", () => {
  const servers: Array<{ close(): void }> = [];
  afterEach(() => {
    for (const server of servers.splice(0)) server.close();
  });

  it("receive the same payload as a POST and decide with their JSON body", async () => {
    const received: unknown[] = [];
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => {
        body += chunk;
      });
      req.on("end", () => {
        received.push({
          headers: { auth: req.headers["x-hook-token"], type: req.headers["content-type"] },
          body: JSON.parse(body),
        });
        res.setHeader("content-type", "application/json");
        res.end(
          JSON.stringify({
            hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "allow" } },
          }),
        );
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    process.env.TOOLBUS_TEST_HOOK_TOKEN = "s3cret";
    const { client, subjects } = await withHooks("http hook", {
      PermissionRequest: [
        {
          hooks: [
            {
              type: "http",
              url,
              headers: { "x-hook-token": "Bearer $TOOLBUS_TEST_HOOK_TOKEN" },
              allowedEnvVars: ["TOOLBUS_TEST_HOOK_TOKEN"],
            },
          ],
        },
      ],
    });
    const request = decideRequest();
    await expect(probe(client, subjects, request)).resolves.toEqual({
      decided: { decision: "approved", source: "hook" },
    });
    expect(received).toEqual([
      {
        headers: { auth: "Bearer s3cret", type: "application/json" },
        body: {
          session_id: "thread-1",
          hook_event_name: "PermissionRequest",
          tool_name: "mcp__docs__search",
          tool_input: { q: "release notes" },
          tool_use_id: request.callId,
        },
      },
    ]);
  });
});

describe("post_tool_use", () => {
  const toolResponse = { content: [{ type: "text", text: "3 results" }] };
  const postToolUse = (
    client: Awaited<ReturnType<typeof withHooks>>["client"],
    subject: string,
    hookName: string,
  ) =>
    client.request(
      subject,
      { callId: "call-post", hookName, toolInput: { q: "x" }, toolResponse },
      PostToolUseResultSchema,
    );

  it("does not block when no PostToolUse hook matches", async () => {
    const hook = await hookScript("block.sh", "echo blocked >&2; exit 2");
    const { client, subjects } = await withHooks("post none", {
      PostToolUse: [{ matcher: "mcp__other__.*", hooks: [command(hook)] }],
    });
    await expect(postToolUse(client, subjects.approvalsPostToolUse, "mcp__docs__search")).resolves.toEqual({
      block: false,
    });
  });

  it("blocks with the hook's reason, given the tool's response on stdin", async () => {
    const out = join(await mkdtemp(join(tmpdir(), "toolbus-post-")), "payload.json");
    const hook = await hookScript(
      "review.sh",
      `cat > ${out}; echo '{"decision":"block","reason":"the result mentions an internal host"}'`,
    );
    const { client, subjects } = await withHooks("post block", { PostToolUse: [{ hooks: [command(hook)] }] });
    await expect(postToolUse(client, subjects.approvalsPostToolUse, "mcp__docs__search")).resolves.toEqual({
      block: true,
      reason: "the result mentions an internal host",
    });
    expect(JSON.parse(await readFile(out, "utf8"))).toEqual({
      hook_event_name: "PostToolUse",
      tool_name: "mcp__docs__search",
      tool_input: { q: "x" },
      tool_use_id: "call-post",
      tool_response: toolResponse,
    });
  });
});

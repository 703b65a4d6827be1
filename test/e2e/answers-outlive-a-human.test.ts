/**
 * Answers that outlive a waiting human, on a nats-server that enforces the generated accounts:
 * a call whose approval is answered after NATS stopped letting the dispatcher answer its first
 * request (the reply window: `allow_responses` and the service exports' response threshold, 2
 * minutes by default, 30 s here so the test takes one minute) still gets its reply — through
 * the CLI, REST and the MCP edge at once. So do a server's own questions during a call (an
 * elicitation, a sampling request) that the person or the model answers that late. `toolbus
 * tail` on the CLI's own identity follows the calls; on an identity that may not, it says so and
 * fails instead of printing nothing.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EnforcedToolbus, startEnforcedToolbus, stdioServerLines } from "./support/enforced-toolbus.js";
import { EVERYTHING, ROOT, until } from "./support/pnpm-start.js";

/** How long NATS lets a responder answer a request here (2 minutes by default). */
const REPLY_WINDOW_SEC = 30;
/** When the human answers: well after the reply window closed on every first request. */
const HUMAN_ANSWERS_AFTER_MS = (REPLY_WINDOW_SEC + 12) * 1000;

/** The generated configuration with every reply window `REPLY_WINDOW_SEC` long. */
function shortReplyWindows(config: string): string {
  const window = `"${REPLY_WINDOW_SEC}s"`;
  const shortened = config
    .replaceAll("allow_responses: true", `allow_responses: { max: 1, expires: ${window} }`)
    // Exports only (`{ service: "<subject>", accounts: […] }`), not imports.
    .replace(/(\{ service: "[^\n]*?) \}$/gm, `$1, response_threshold: ${window} }`);
  // Both kinds of window are there to shorten, or the test proves nothing.
  expect(shortened).toMatch(/allow_responses: \{ max: 1, expires/);
  expect(shortened).toMatch(/response_threshold/);
  return shortened;
}

interface Cli {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function cli(args: string[], env: NodeJS.ProcessEnv): Cli {
  const child = spawn(process.execPath, [join(ROOT, "packages/cli/bin/toolbus.js"), ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, output: () => output, exited };
}

describe("answers that outlive a waiting human", () => {
  let running: EnforcedToolbus;
  let cliEnv: NodeJS.ProcessEnv;
  let tail: Cli | undefined;

  beforeAll(async () => {
    running = await startEnforcedToolbus({
      label: "outlive",
      servers: ["everything", "asker", "sampler"],
      tables: () => ({
        everything: stdioServerLines(
          process.execPath,
          [EVERYTHING, "stdio"],
          ['default_tools_approval_mode = "prompt"'],
        ),
        // The same server, whose tools run unasked: only the server's own questions wait. Two of
        // them, as a server that asks during two calls at once does not say which it asks for.
        asker: stdioServerLines(
          process.execPath,
          [EVERYTHING, "stdio"],
          ['default_tools_approval_mode = "approve"'],
        ),
        sampler: stdioServerLines(
          process.execPath,
          [EVERYTHING, "stdio"],
          ['default_tools_approval_mode = "approve"'],
        ),
      }),
      toml: ["[approvals]", "timeout_sec = 300"],
      env: { NATS_URL: undefined, NATS_NKEY_FILE: undefined, NATS_IDENTITIES_DIR: undefined },
      natsConfig: shortReplyWindows,
    });
    cliEnv = {
      NATS_URL: running.server.url,
      NATS_NKEY_FILE: running.identities.seedFile("cli"),
      NATS_IDENTITIES_DIR: undefined,
      TOOLBUS_PREFIX: "toolbus",
    };
  });

  afterAll(async () => {
    if (tail && tail.child.exitCode === null) tail.child.kill("SIGINT");
    await running?.stop();
  });

  it("`toolbus tail` on the CLI's identity listens to what its role may see", async () => {
    tail = cli(["tail"], cliEnv);
    await until(() => tail!.output().includes("Listening on") || tail!.child.exitCode !== null, "tail");
    expect(tail.child.exitCode, tail.output()).toBeNull();
  });

  it("the CLI, REST and an MCP client each get their reply after the human answered late", async () => {
    const { url } = running;
    const called = cli(["call", "everything__get_sum", '{"a":2,"b":3}'], cliEnv);
    const rest = fetch(`${url}/v1/calls`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        callId: "outlive-rest",
        tool: "mcp__everything__get_sum",
        arguments: '{"a":4,"b":5}',
      }),
    }).then(async (response) => (await response.json()) as { status: string; output: { body: string } });
    const client = new Client({ name: "outlive", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
    const mcp = client.callTool({ name: "everything__get_sum", arguments: { a: 6, b: 7 } }, undefined, {
      timeout: 180_000,
    });

    // All three wait for a human, who answers once every reply window opened for them has closed.
    let pending: Array<{ requestId: string; callId: string }> = [];
    for (let i = 0; i < 600 && pending.length < 3; i++) {
      pending = ((await (await fetch(`${url}/v1/approvals`)).json()) as { pending: typeof pending }).pending;
      if (pending.length < 3) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(pending).toHaveLength(3);
    await new Promise((resolve) => setTimeout(resolve, HUMAN_ANSWERS_AFTER_MS));
    expect(called.child.exitCode, called.output()).toBeNull();
    for (const { requestId } of pending) {
      const answered = await fetch(`${url}/v1/approvals/${requestId}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ choice: "allow" }),
      });
      expect(answered.status).toBe(200);
    }

    expect(await called.exited, called.output()).toBe(0);
    expect(called.output()).toContain("The sum of 2 and 3 is 5.");
    const restReply = await rest;
    expect(restReply.status).toBe("completed");
    expect(restReply.output.body).toContain("The sum of 4 and 5 is 9.");
    const mcpReply = (await mcp) as { content: Array<{ type: string; text?: string }>; isError?: boolean };
    expect(mcpReply.isError ?? false).toBe(false);
    expect(mcpReply.content.map((part) => part.text ?? "").join("")).toContain("The sum of 6 and 7 is 13.");
    await client.close();
    // No reply was refused on the way: nothing relied on a reply window still open.
    expect(running.toolbus.output()).not.toMatch(/NATS refused publish on _INBOX/);
  }, 240_000);

  it("a server's elicitation and sampling request during a call get the answers given late", async () => {
    const client = new Client(
      { name: "outlive-questions", version: "1.0.0" },
      { capabilities: { elicitation: { form: {} }, sampling: {} } },
    );
    const late = () => new Promise((resolve) => setTimeout(resolve, HUMAN_ANSWERS_AFTER_MS));
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(`elicitation: ${request.params.message}`);
      await late();
      return { action: "accept", content: { name: "Ada Lovelace", check: true } };
    });
    client.setRequestHandler(CreateMessageRequestSchema, async () => {
      asked.push("sampling");
      await late();
      return {
        role: "assistant",
        model: "late-model",
        content: { type: "text", text: "forty-two, eventually" },
      };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${running.url}/mcp`)));
    const text = (reply: unknown) =>
      (reply as { content: Array<{ text?: string }> }).content.map((part) => part.text ?? "").join("");
    const [elicited, sampled] = await Promise.all([
      client.callTool({ name: "asker__trigger_elicitation_request", arguments: {} }, undefined, {
        timeout: 180_000,
      }),
      client.callTool(
        { name: "sampler__trigger_sampling_request", arguments: { prompt: "the answer?" } },
        undefined,
        { timeout: 180_000 },
      ),
    ]);
    // Each question reached the client once, however many times its hold ran out on the way.
    expect(asked.sort()).toEqual([
      "elicitation: Please provide inputs for the following fields:",
      "sampling",
    ]);
    expect(text(elicited)).toContain("Ada Lovelace");
    expect(text(sampled)).toContain("forty-two, eventually");
    await client.close();
    expect(running.toolbus.output()).not.toMatch(/NATS refused publish on _INBOX/);
  }, 240_000);

  it("`toolbus tail` showed each call begin and end, by the name MCP clients see", async () => {
    const lines = () =>
      tail!
        .output()
        .split("\n")
        .filter((line) => line.includes("everything__get_sum"));
    await until(
      () => lines().filter((line) => /completed/.test(line)).length >= 3,
      "three calls ended in the tail",
    );
    expect(lines().filter((line) => /started/.test(line))).toHaveLength(3);
  });

  it("`toolbus tail` on an identity that may not follow events fails and says why", async () => {
    const refused = cli(["tail"], { ...cliEnv, NATS_NKEY_FILE: running.identities.seedFile("memory") });
    const code = await refused.exited;
    expect(code, refused.output()).not.toBe(0);
    expect(refused.output()).toMatch(/NATS refused to let this identity follow events/);
    expect(refused.output()).not.toContain("Listening on");
  });
});

/**
 * The permission matrix against what the services really do: `pnpm start` on a nats-server that
 * enforces the generated config, each service on its own identity, driven through every edge
 * (MCP, REST, a human approval, events, the CLI, an agent on the bus) — and the server refused
 * nothing. Then `pnpm start` as a newcomer runs it: its own NATS, closed to strangers.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { jetstream } from "@nats-io/jetstream";
import { connect, nkeyAuthenticator } from "@nats-io/transport-node";
import type { NatsIdentities } from "@toolbus/bus";
import {
  createSubjects,
  inboxPrefix,
  MemoryUsageResultSchema,
  PRINCIPAL_FIELDS,
  SUBJECTS,
} from "@toolbus/protocol";
import { freePort, type NatsServerProcess, withPgSchema } from "@toolbus/testkit";
import { type StdioTestServer, startTestServer } from "@toolbus/testkit/mcp-test-server";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type EnforcedToolbus,
  startEnforcedToolbus,
  stdioServerLines,
} from "../e2e/support/enforced-toolbus.js";
import {
  EVERYTHING,
  exited,
  ROOT,
  type RunningToolbus,
  startToolbus,
  until,
} from "../e2e/support/pnpm-start.js";

const run = promisify(execFile);
const subjects = createSubjects("toolbus");

/** The environment without any NATS setting of the test run's own. */
function withoutNats(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  // A child gets no variable whose value is undefined.
  return { ...env, NATS_URL: undefined, NATS_NKEY_FILE: undefined, NATS_IDENTITIES_DIR: undefined };
}

describe("every service on its own identity, on a bus that enforces the matrix", () => {
  let running: EnforcedToolbus;
  let server: NatsServerProcess;
  let identities: NatsIdentities;
  let toolbus: RunningToolbus;
  let schema: EnforcedToolbus["schema"];
  let url: string;
  let big: StdioTestServer;

  beforeAll(async () => {
    big = await startTestServer({
      transport: "stdio",
      script: { tools: [{ name: "payload", behavior: { kind: "huge", bytes: 1_500_000 } }] },
    });
    const approve = 'default_tools_approval_mode = "approve"';
    running = await startEnforcedToolbus({
      label: "leastpriv",
      servers: ["everything", "big"],
      tables: () => ({
        everything: stdioServerLines(
          process.execPath,
          [EVERYTHING, "stdio"],
          [approve, "", "[mcp_servers.everything.tools.get-sum]", 'approval_mode = "prompt"'],
        ),
        // A result larger than one NATS message travels through the large-replies stream.
        big: stdioServerLines(big.command, big.args, [approve]),
      }),
      env: withoutNats(process.env),
    });
    ({ server, identities, toolbus, url, schema } = running);
    expect(toolbus.output()).toContain(`NATS           ${server.url} (identities from ${identities.dir})`);
  });

  afterAll(async () => {
    await running?.stop();
    await big?.dispose();
  });

  it("delivers a result larger than one NATS message, whole", async () => {
    const response = await fetch(`${url}/v1/calls`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ callId: "lp-big-1", tool: "mcp__big__payload", arguments: "{}" }),
    });
    const reply = (await response.json()) as { status: string; result: { content: Array<{ text: string }> } };
    expect({ status: reply.status, bytes: reply.result.content[0]?.text.length }).toEqual({
      status: "completed",
      bytes: 1_500_000,
    });
  });

  it("serves an MCP client: tools, a call, resources (also through the resource tools) and prompts", async () => {
    const client = new Client({ name: "least-privilege", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
    try {
      const tools = (await client.listTools()).tools.map((tool) => tool.name);
      const echo = tools.find((name) => name.endsWith("echo"))!;
      expect(await client.callTool({ name: echo, arguments: { message: "least privilege" } })).toMatchObject({
        content: [{ type: "text", text: "Echo: least privilege" }],
      });
      const resources = await client.listResources();
      expect(resources.resources.length).toBeGreaterThan(0);
      const first = resources.resources[0]!;
      expect((await client.readResource({ uri: first.uri })).contents.length).toBeGreaterThan(0);
      // The resource tools run in the dispatcher, which asks the catalog's resource subjects.
      const read = await client.callTool({
        name: "read_mcp_resource",
        arguments: { server: "everything", uri: first.uri },
      });
      expect(read.isError).toBeFalsy();
      const text = (read.content as Array<{ text: string }>)[0]?.text ?? "";
      // (A long resource is truncated for the model in the middle: its start stands.)
      expect(text.startsWith(`{"server":"everything","uri":${JSON.stringify(first.uri)},"contents":[`)).toBe(
        true,
      );
      const prompts = await client.listPrompts();
      expect(prompts.prompts.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });

  it("waits for a human, who approves over REST, and the call runs", async () => {
    const call = fetch(`${url}/v1/calls`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        callId: "lp-sum-1",
        tool: "mcp__everything__get_sum",
        arguments: '{"a":2,"b":3}',
      }),
    });
    let requestId: string | undefined;
    for (let i = 0; i < 100 && requestId === undefined; i++) {
      const { pending } = (await (await fetch(`${url}/v1/approvals`)).json()) as {
        pending: Array<{ requestId: string }>;
      };
      requestId = pending[0]?.requestId;
      if (requestId === undefined) await new Promise((r) => setTimeout(r, 100));
    }
    expect(requestId).toBe("mcp_tool_call_approval_lp-sum-1");
    const answered = await fetch(`${url}/v1/approvals/${requestId}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ choice: "allow" }),
    });
    expect(answered.status).toBe(200);
    const reply = (await (await call).json()) as { status: string; output: { body: string } };
    expect(reply.status).toBe("completed");
    // The sum's own sentence: the body's wall-time header may hold a 5 by chance.
    expect(reply.output.body).toContain("The sum of 2 and 3 is 5.");
  });

  it("is driven by the CLI with its own identity", async () => {
    const { stdout } = await run(process.execPath, ["packages/cli/bin/toolbus.js", "servers", "--json"], {
      cwd: ROOT,
      env: { ...withoutNats(process.env), NATS_URL: server.url, NATS_NKEY_FILE: identities.seedFile("cli") },
    });
    expect(JSON.parse(stdout)).toEqual([
      expect.objectContaining({ name: "big", status: "ready" }),
      expect.objectContaining({ name: "everything", status: "ready" }),
    ]);
  });

  it("counts an agent's memory message, published on the bus with the agent's identity", async () => {
    const nc = await connect({
      servers: server.url,
      authenticator: nkeyAuthenticator(
        new TextEncoder().encode(readFileSync(identities.seedFile("agent"), "utf8").trim()),
      ),
      inboxPrefix: inboxPrefix("toolbus", "agent"),
    });
    try {
      const rollout = "019c6e27-e55b-73d1-87d8-4e01f1f75043";
      // Usage is counted for rollouts the memory tables know (written by Codex's memory pipeline).
      const db = new pg.Client(schema.poolConfig);
      await db.connect();
      // The memory service migrates its tables once it runs; under load that may still be under way.
      for (let i = 0; i < 150; i++) {
        const { rows } = await db.query<{ table: string | null }>(
          "SELECT to_regclass('stage1_outputs') AS table",
        );
        if (rows[0]?.table) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      await db.query(
        `INSERT INTO stage1_outputs (thread_id, source_updated_at, raw_memory, rollout_summary, generated_at)
         VALUES ($1, 1, 'raw', 'summary', 1)`,
        [rollout],
      );
      await db.end();
      const text = `done\n<oai-mem-citation>\n<citation_entries>\nMEMORY.md:1-2|note=[x]\n</citation_entries>\n<rollout_ids>\n${rollout}\n</rollout_ids>\n</oai-mem-citation>`;
      await jetstream(nc).publish(subjects.memoryMessage, JSON.stringify({ messageId: "lp-m1", text }));
      // The row is there from the insert above (count null) until the message is counted.
      let usage: Array<{ usageCount: number | null }> = [];
      for (let i = 0; i < 100 && usage[0]?.usageCount !== 1; i++) {
        const reply = await nc.request(subjects.memoryUsage, JSON.stringify({ rolloutIds: [rollout] }));
        const body = JSON.parse(reply.string()) as { ok: boolean; result: unknown };
        usage = MemoryUsageResultSchema.parse(body.result).usage;
        if (usage[0]?.usageCount !== 1) await new Promise((r) => setTimeout(r, 100));
      }
      expect(usage).toEqual([expect.objectContaining({ rolloutId: rollout, usageCount: 1 })]);
    } finally {
      await nc.close();
    }
  });

  it("believes who asked only from the gateway: every other identity that names a principal is refused", async () => {
    // Each subject whose request may name a principal, with a request that names one.
    const named: Record<string, { subject: string; body: Record<string, unknown> }> = {
      "toolbus.dispatch.call": {
        subject: subjects.dispatchCall,
        body: { callId: "lp-forged-1", tool: "mcp__everything__echo", arguments: '{"message":"forged"}' },
      },
      "toolbus.approvals.resolve": {
        subject: subjects.approvalsResolve,
        body: { requestId: "mcp_tool_call_approval_lp-forged-2", choice: "allow" },
      },
    };
    expect(Object.keys(named).sort()).toEqual(Object.keys(PRINCIPAL_FIELDS).sort());
    const outcomes: string[] = [];
    for (const row of SUBJECTS.filter((spec) => spec.subject in PRINCIPAL_FIELDS)) {
      const { subject, body } = named[row.subject]!;
      const field = PRINCIPAL_FIELDS[row.subject]!;
      for (const role of row.users.filter((user) => user !== "gateway")) {
        const nc = await connect({
          servers: server.url,
          authenticator: nkeyAuthenticator(
            new TextEncoder().encode(readFileSync(identities.seedFile(role), "utf8").trim()),
          ),
          inboxPrefix: inboxPrefix("toolbus", role),
        });
        try {
          const ask = async (request: Record<string, unknown>) => {
            const reply = JSON.parse((await nc.request(subject, JSON.stringify(request))).string()) as {
              ok: boolean;
              error?: { code: string; message: string };
            };
            return reply.ok ? "ok" : `${reply.error?.code}: ${reply.error?.message}`;
          };
          outcomes.push(`${role} ${row.subject} naming: ${await ask({ ...body, [field]: "oauth:rita" })}`);
          // Without a principal the same request goes through (a call runs; an unknown request is named).
          outcomes.push(`${role} ${row.subject} unnamed: ${(await ask(body)).split(":")[0]}`);
        } finally {
          await nc.close();
        }
      }
    }
    const refusal = (role: string, field: string) =>
      `unauthorized: only the gateway names who a request is from; this one came from the ${role} identity and names ${field} "oauth:rita". Send it without ${field}, or through the gateway`;
    expect(outcomes).toEqual([
      `cli toolbus.dispatch.call naming: ${refusal("cli", "requestedBy")}`,
      "cli toolbus.dispatch.call unnamed: ok",
      `agent toolbus.dispatch.call naming: ${refusal("agent", "requestedBy")}`,
      "agent toolbus.dispatch.call unnamed: ok",
      `cli toolbus.approvals.resolve naming: ${refusal("cli", "by")}`,
      "cli toolbus.approvals.resolve unnamed: bad_request",
    ]);
  });

  it("was refused nothing: the matrix covers what every service serves and calls", () => {
    expect(server.violations()).toEqual([]);
  });
});

describe("pnpm start without NATS_URL", () => {
  let toolbus: RunningToolbus;
  let dir: string;
  let state: string;
  let announced: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "toolbus-secure-start-"));
    // The private state directories of projects, the test's own rather than the home's.
    state = mkdtempSync(join(tmpdir(), "toolbus-secure-state-"));
    const schema = await withPgSchema(process.env.DATABASE_URL!, "securestart");
    toolbus = startToolbus(
      [],
      {
        ...withoutNats(process.env),
        TOOLBUS_HTTP_PORT: String(await freePort()),
        DATABASE_URL: schema.url,
        XDG_STATE_HOME: state,
      },
      dir,
    );
    // Until the banner's NATS line, which follows the MCP endpoint's (maybe in a later chunk).
    const natsLine = /NATS +(nats:\/\/127\.0\.0\.1:\d+)/;
    await until(() => natsLine.test(toolbus.output()) || toolbus.child.exitCode !== null, "start-up");
    announced = natsLine.exec(toolbus.output())?.[1] ?? "";
    return async () => {
      if (toolbus.child.exitCode === null) {
        toolbus.child.kill("SIGINT");
        await exited(toolbus.child);
      }
      await schema.drop();
    };
  });

  it("runs a NATS of its own, not the open one on 4222, and says clients need an identity", () => {
    expect(announced).not.toBe("");
    expect(announced).not.toBe("nats://127.0.0.1:4222");
    expect(toolbus.output()).toMatch(
      /\(started here; every client needs an identity: the toolbus CLI run in this folder finds its own in \S+\/nats\/cli\.nk\)/,
    );
  });

  it("refuses a NATS client without credentials", async () => {
    await expect(connect({ servers: announced, reconnect: false })).rejects.toThrow(
      /Authorization Violation/,
    );
  });

  it("lets the CLI run from the same folder find the bus and its identity", async () => {
    const { stdout } = await run(
      process.execPath,
      [join(ROOT, "packages/cli/bin/toolbus.js"), "servers", "--json"],
      {
        cwd: dir,
        env: { ...withoutNats(process.env), XDG_STATE_HOME: state },
      },
    );
    expect(JSON.parse(stdout)).toEqual([expect.objectContaining({ name: "everything", status: "ready" })]);
  });
});

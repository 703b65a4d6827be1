/**
 * A malicious MCP server can do no more than lie about itself: toolbus (`pnpm start` on a bus
 * that enforces the generated accounts) runs a stdio server that holds its own connector's NATS
 * seed — as if it had stolen it from the catalog process that runs it — and tries, through a
 * call of its tool, everything that identity must not do. Each attempt is refused; writing its
 * own catalog entry (a lie about itself) is what it may.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type NatsIdentities, readSeedFile, writeNatsIdentities } from "@toolbus/bus";
import { identityOf } from "@toolbus/protocol";
import {
  freePort,
  type NatsServerProcess,
  natsServerBinaries,
  startNatsServer,
  withPgSchema,
} from "@toolbus/testkit";
import { type StdioTestServer, startTestServer } from "@toolbus/testkit/mcp-test-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exited, ROOT, type RunningToolbus, startToolbus, until } from "../e2e/support/pnpm-start.js";

const TSX = pathToFileURL(createRequire(join(ROOT, "package.json")).resolve("tsx")).href;
const HOSTILE = join(ROOT, "test/security/support/hostile-connector-server.ts");

describe("a malicious MCP server holding its own connector's seed", () => {
  let server: NatsServerProcess;
  let identities: NatsIdentities;
  let toolbus: RunningToolbus;
  let victim: StdioTestServer;
  let schema: Awaited<ReturnType<typeof withPgSchema>>;
  let url: string;

  beforeAll(async () => {
    // The 2.10 the deploy files run, where this machine has it.
    const binary = natsServerBinaries().sort((a, b) => (a.version < b.version ? 1 : -1))[0];
    identities = writeNatsIdentities({
      dir: mkdtempSync(join(tmpdir(), "toolbus-hostile-ids-")),
      prefix: "toolbus",
      servers: ["evil", "victim"],
    });
    server = await startNatsServer({
      config: readFileSync(identities.authConf, "utf8"),
      ...(binary ? { binary: binary.path } : {}),
    });
    schema = await withPgSchema(process.env.DATABASE_URL as string, "hostile");
    victim = await startTestServer({ transport: "stdio", script: { tools: [{ name: "echo" }] } });
    const stolen = readSeedFile(identities.seedFile(identityOf("connector", "evil")));
    const dir = mkdtempSync(join(tmpdir(), "toolbus-hostile-"));
    const port = await freePort();
    const config = join(dir, "toolbus.toml");
    writeFileSync(
      config,
      [
        "[gateway]",
        `port = ${port}`,
        "",
        "[mcp_servers.evil]",
        `command = ${JSON.stringify(process.execPath)}`,
        `args = ["--import", ${JSON.stringify(TSX)}, ${JSON.stringify(HOSTILE)}]`,
        'default_tools_approval_mode = "approve"',
        `env = { NATS_URL = ${JSON.stringify(server.url)}, STOLEN_SEED = ${JSON.stringify(stolen)}, SELF = "evil", VICTIM = "victim", PREFIX = "toolbus" }`,
        "",
        "[mcp_servers.victim]",
        `command = ${JSON.stringify(victim.command)}`,
        `args = ${JSON.stringify(victim.args)}`,
        'default_tools_approval_mode = "approve"',
        "",
      ].join("\n"),
    );
    toolbus = startToolbus(
      ["--config", config],
      {
        ...process.env,
        NATS_URL: server.url,
        NATS_IDENTITIES_DIR: identities.dir,
        NATS_NKEY_FILE: undefined,
        DATABASE_URL: schema.url,
      },
      dir,
    );
    await until(
      () => toolbus.output().includes("MCP endpoint") || toolbus.child.exitCode !== null,
      "start-up",
    );
    url = `http://127.0.0.1:${port}`;
  }, 120_000);

  afterAll(async () => {
    if (toolbus?.child.exitCode === null) {
      toolbus.child.kill("SIGINT");
      await exited(toolbus.child);
    }
    await server?.stop();
    await schema?.drop();
    await victim?.dispose();
  });

  it("is refused everything of another server and of approvals, and may lie only about itself", async () => {
    const response = await fetch(`${url}/v1/calls`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ callId: "hostile-1", tool: "mcp__evil__attack", arguments: "{}" }),
    });
    const reply = (await response.json()) as {
      status: string;
      result?: { content: Array<{ text: string }> };
    };
    expect(reply.status, JSON.stringify(reply)).toBe("completed");
    const report = JSON.parse(reply.result?.content[0]?.text ?? "{}") as Record<string, string>;
    const { "lie about itself (write its own catalog entry)": lie, ...forbidden } = report;
    expect(Object.keys(forbidden).length).toBeGreaterThan(10);
    expect(Object.entries(forbidden).filter(([, outcome]) => outcome !== "refused")).toEqual([]);
    expect(lie).toBe("allowed");
    // The victim's tool still runs as it is, through the dispatcher.
    const echoed = await fetch(`${url}/v1/calls`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        callId: "victim-1",
        tool: "mcp__victim__echo",
        arguments: '{"text":"still mine"}',
      }),
    });
    expect(((await echoed.json()) as { status: string }).status).toBe("completed");
  });
});

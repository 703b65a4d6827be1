/**
 * A desktop client's way to a remote MCP server: `mcp-remote` (the npm package, pinned in this
 * package) run as a real child process in front of `pnpm start`, with the gateway's bearer token
 * in a header, spoken to over its stdio by the SDK's stdio client — listing, calling an upstream
 * tool, and answering toolbus's approval elicitation relayed back through the proxy.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { cleanupJetStream, freePort, isolation, withPgSchema } from "@toolbus/testkit";
import { type StdioTestServer, startTestServer } from "@toolbus/testkit/mcp-test-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVERYTHING, natsUrl, startToolbus, until } from "./support/pnpm-start.js";

const MCP_REMOTE = createRequire(import.meta.url).resolve("mcp-remote/dist/proxy.js");
const TOKEN = randomBytes(24).toString("hex");

describe("mcp-remote in front of pnpm start", () => {
  const { prefix } = isolation("mcpremote");
  let toolbus: ReturnType<typeof startToolbus>;
  let schema: Awaited<ReturnType<typeof withPgSchema>>;
  let notes: StdioTestServer;
  let url: string;
  let client: Client;
  let proxyOutput = "";
  /** What the client is asked to elicit, and how it answers next. */
  const asked: unknown[] = [];
  let answer: ElicitResult = { action: "accept" };

  beforeAll(async () => {
    schema = await withPgSchema(process.env.DATABASE_URL!, "mcpremote");
    // A tool without annotations: in mode auto, toolbus asks before every call of it.
    notes = await startTestServer({
      transport: "stdio",
      script: {
        tools: [
          {
            name: "write_note",
            description: "Writes a note",
            inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
          },
        ],
      },
    });
    const dir = mkdtempSync(join(tmpdir(), "toolbus-mcp-remote-"));
    const port = await freePort();
    const config = join(dir, "toolbus.toml");
    writeFileSync(
      config,
      [
        "[gateway]",
        `port = ${port}`,
        'tokens_env = "TOOLBUS_TOKENS"',
        "",
        // One person with a token of their own answers their own calls' approvals.
        "[approvals]",
        "self_approve = true",
        "",
        "[mcp_servers.everything]",
        `command = ${JSON.stringify(process.execPath)}`,
        `args = [${JSON.stringify(EVERYTHING)}, "stdio"]`,
        "",
        "[mcp_servers.notes]",
        `command = ${JSON.stringify(notes.command)}`,
        `args = ${JSON.stringify(notes.args)}`,
        "",
      ].join("\n"),
    );
    toolbus = startToolbus(["--config", config], {
      TOOLBUS_PREFIX: prefix,
      NATS_URL: natsUrl,
      DATABASE_URL: schema.url,
      TOOLBUS_TOKENS: `desktop:caller:${TOKEN}`,
    });
    await until(() => toolbus.output().includes("MCP endpoint"), "the start-up announcement");
    url = `http://127.0.0.1:${port}/mcp`;

    // As a desktop client's config runs it: the header names a variable, so the token stays out of argv.
    const transport = new StdioClientTransport({
      command: process.execPath,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: mcp-remote's own ${VAR} placeholder syntax.
      args: [MCP_REMOTE, url, "--header", "Authorization:${AUTH_HEADER}", "--transport", "http-only"],
      env: {
        PATH: process.env.PATH ?? "",
        AUTH_HEADER: `Bearer ${TOKEN}`,
        // mcp-remote keeps OAuth state there; never the developer's ~/.mcp-auth.
        MCP_REMOTE_CONFIG_DIR: join(dir, "mcp-auth"),
      },
      stderr: "pipe",
    });
    transport.stderr?.on("data", (chunk: Buffer) => (proxyOutput += chunk.toString()));
    client = new Client({ name: "desktop-e2e", version: "1.0.0" }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return answer;
    });
    const connecting = client.connect(transport);
    // connect() spawns the proxy before its first await.
    const proxyPid = transport.pid;
    try {
      await connecting;
    } catch (error) {
      // The SDK's own close gives the proxy seconds on timers that do not hold this worker open: a
      // proxy stuck in its OAuth flow would outlive the run.
      if (proxyPid !== null) {
        try {
          process.kill(proxyPid, "SIGKILL");
        } catch {
          // It had exited already.
        }
      }
      throw new Error(
        `mcp-remote did not connect: ${(error as Error).message}\n${proxyOutput.slice(-2_000)}`,
      );
    }
  });

  afterAll(async () => {
    await client?.close();
    if (toolbus?.child.exitCode === null) toolbus.child.kill("SIGKILL");
    await notes?.dispose();
    await cleanupJetStream(natsUrl, prefix);
    await schema?.drop();
  });

  it("reaches a gateway that refuses requests without the token", async () => {
    const bare = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    expect(bare.status).toBe(401);
    expect(client.getServerVersion()?.name).toBe("toolbus");
  });

  it("lists the upstream servers' tools under toolbus's names", async () => {
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(["everything__echo", "notes__write_note"]));
  });

  it("calls an upstream tool and gets its result", async () => {
    const result = await client.callTool({
      name: "everything__echo",
      arguments: { message: "through mcp-remote" },
    });
    expect(result.content).toEqual([{ type: "text", text: "Echo: through mcp-remote" }]);
  });

  it("relays toolbus's approval elicitation to the desktop client, and runs the call it allows", async () => {
    const before = asked.length;
    answer = { action: "accept" };
    const result = await client.callTool({ name: "notes__write_note", arguments: { text: "allowed" } });
    expect({ result: result.content, asked: asked.slice(before) }).toEqual({
      result: [{ type: "text", text: JSON.stringify({ text: "allowed" }) }],
      asked: [
        expect.objectContaining({
          message: 'Allow the notes MCP server to run tool "write_note"?',
          _meta: expect.objectContaining({
            codex_approval_kind: "mcp_tool_call",
            tool_params: { text: "allowed" },
          }),
        }),
      ],
    });
  });

  it("declines through the proxy: the server never sees the call", async () => {
    answer = { action: "decline" };
    const result = await client.callTool({ name: "notes__write_note", arguments: { text: "refused" } });
    expect({
      result: result.content,
      isError: result.isError,
      ran: (await notes.calls()).map((call) => call.arguments),
    }).toEqual({
      result: [{ type: "text", text: "user rejected MCP tool call" }],
      isError: true,
      ran: [{ text: "allowed" }],
    });
  });
});

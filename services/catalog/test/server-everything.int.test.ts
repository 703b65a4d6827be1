// The reference server, @modelcontextprotocol/server-everything, over stdio and streamable HTTP:
// every tool it offers a client with toolbus's capabilities is in the catalog, correctly
// named; its list_changed is followed; and an HTTP server that goes away is reconnected.

import {
  Client,
  StreamableHTTPClientTransport,
  type Tool,
  type Transport,
} from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { freePort } from "@toolbus/testkit";
import { serverEverythingCommand } from "@toolbus/testkit/mcp-test-server";
import { afterEach, describe, expect, it } from "vitest";
import { CLIENT_CAPABILITIES } from "../src/adapters/mcp/mcp-connection.js";
import { type EverythingHttp, startEverythingHttp } from "./support/everything-http.js";
import { CatalogHarness, eventually, toolbusToml } from "./support/harness.js";

let harness: CatalogHarness;
afterEach(async () => {
  await harness?.close();
});

/** What server-everything lists to a client declaring toolbus's capabilities, once it settled. */
async function listDirectly(transport: Transport): Promise<Tool[]> {
  const client = new Client({ name: "direct", version: "1.0.0" }, { capabilities: CLIENT_CAPABILITIES });
  let changed = false;
  client.setNotificationHandler("notifications/tools/list_changed", () => {
    changed = true;
  });
  await client.connect(transport);
  try {
    // It registers its capability-dependent tools right after initialization and says so.
    await eventually("its tools/list_changed", () => (changed ? true : undefined), 5_000).catch(
      () => undefined,
    );
    return (await client.listTools()).tools;
  } finally {
    await client.close();
  }
}

/** The names a tool must get: namespace `mcp__everything`, every other character `_`. */
function expectedEntries(tools: Tool[]) {
  return tools
    .map((tool) => {
      const callableName = tool.name.replace(/[^A-Za-z0-9_]/gu, "_");
      return {
        server: "everything",
        rawName: tool.name,
        callableNamespace: "mcp__everything",
        callableName,
        flatName: `mcp__everything__${callableName}`,
        hookName: `mcp__everything__${callableName}`,
        ...(tool.title === undefined ? {} : { title: tool.title }),
        description: tool.description ?? "",
      };
    })
    .sort((a, b) => (a.rawName < b.rawName ? -1 : 1));
}

async function catalogEntries() {
  return (await harness.catalog("all")).tools.map((tool) => ({
    server: tool.server,
    rawName: tool.rawName,
    callableNamespace: tool.callableNamespace,
    callableName: tool.callableName,
    flatName: tool.flatName,
    hookName: tool.hookName,
    ...(tool.title === undefined ? {} : { title: tool.title }),
    description: tool.description,
  }));
}

describe("server-everything", () => {
  it("is in the catalog over stdio with every tool it offers toolbus, correctly named", async () => {
    harness = await CatalogHarness.create("everything");
    const command = serverEverythingCommand();
    const direct = await listDirectly(new StdioClientTransport({ ...command, stderr: "pipe" }));
    const { service, logs } = await harness.start(toolbusToml({ servers: { everything: command } }));
    expect(await service.startup).toEqual({ ready: ["everything"], failed: [], cancelled: [] });

    // Its list_changed after initialization makes toolbus list it again.
    await eventually("the re-listing its list_changed asks for", () =>
      logs.find((line) => line.msg === "tools re-listed" && line.reason === "tools/list_changed"),
    );
    expect(direct.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(["echo", "get-sum", "get-roots-list"]),
    );
    expect(await catalogEntries()).toEqual(expectedEntries(direct));
  });

  describe("over streamable HTTP", () => {
    let server: EverythingHttp | undefined;
    afterEach(async () => {
      await server?.stop();
    });

    it("is in the catalog with every tool it offers toolbus, correctly named", async () => {
      harness = await CatalogHarness.create("everything");
      server = await startEverythingHttp(await freePort());
      const direct = await listDirectly(new StreamableHTTPClientTransport(new URL(server.url)));
      const { service } = await harness.start(toolbusToml({ servers: { everything: { url: server.url } } }));
      expect(await service.startup).toEqual({ ready: ["everything"], failed: [], cancelled: [] });

      const origin = new URL(server.url).origin;
      expect((await harness.entry("everything"))?.origin).toBe(origin);
      await eventually("the full listing", async () =>
        (await catalogEntries()).length === direct.length ? true : undefined,
      );
      expect(await catalogEntries()).toEqual(expectedEntries(direct));
    });

    it("reconnects to a server that stopped and came back at the same address, saying so meanwhile", async () => {
      harness = await CatalogHarness.create("everything");
      const port = await freePort();
      server = await startEverythingHttp(port);
      const { service } = await harness.start(toolbusToml({ servers: { everything: { url: server.url } } }));
      expect(await service.startup).toEqual({ ready: ["everything"], failed: [], cancelled: [] });
      const status = harness.subjects.serverStatus("everything");
      const state = (e: Record<string, unknown>) => (e.status as { state: string; error?: string }).state;

      await server.stop();
      server = undefined;
      const lost = await eventually(
        "the lost connection",
        () => harness.eventsOn(status).find((e) => state(e) === "failed"),
        20_000,
      );
      expect(lost.status).toEqual({
        state: "failed",
        error: expect.stringMatching(
          /^MCP client for `everything` lost its connection: the MCP server stopped answering: .+; reconnecting in 500ms \(attempt 1\)$/,
        ),
      });
      // What it said about itself at start-up stays while it is away.
      expect((await harness.catalog()).servers).toEqual([
        {
          name: "everything",
          status: "failed",
          error: expect.stringMatching(/^MCP client for `everything` /),
          required: false,
          revision: expect.any(Number),
          serverInfo: {
            name: "mcp-servers/everything",
            title: "Everything Reference Server",
            version: "2.0.0",
          },
          instructions: expect.stringMatching(/^# Everything Server – Server Instructions\n/),
        },
      ]);

      server = await startEverythingHttp(port);
      await eventually(
        "the reconnection",
        () => (harness.eventsOn(status).filter((e) => state(e) === "ready").length === 2 ? true : undefined),
        30_000,
      );
      expect((await harness.catalog()).servers.map((s) => s.status)).toEqual(["ready"]);
      const revision = (await harness.entry("everything"))!.revision;
      expect(
        await harness.ok(harness.subjects.connectorCall("everything"), {
          callId: "after-reconnect",
          tool: "echo",
          arguments: { message: "back" },
          preparedRevision: revision,
        }),
      ).toEqual({ result: { content: [{ type: "text", text: "Echo: back" }] } });
    }, 60_000);
  });
});

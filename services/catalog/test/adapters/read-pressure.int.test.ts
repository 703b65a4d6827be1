/**
 * A stdio server's large result while the process has no room for large replies: the catalog
 * stops reading the server's output, so the result waits in the server's pipe, not in this
 * process; once there is room the reading resumes and the result arrives whole. A real MCP test
 * server process; the room is the port the catalog is given (its large-replies budget).
 */
import { tmpdir } from "node:os";
import { type StdioTestServer, startTestServer } from "@toolbus/testkit/mcp-test-server";
import { afterEach, describe, expect, it } from "vitest";
import { McpConnection } from "../../src/adapters/mcp/mcp-connection.js";

const MIB = 1024 * 1024;
const open: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.allSettled(open.splice(0).map((close) => close()));
});

const quiet = {
  toolsChanged: () => undefined,
  resourcesChanged: () => undefined,
  promptsChanged: () => undefined,
  closed: () => undefined,
};
const relay = {
  elicit: () => Promise.reject(new Error("no elicitation here")),
  sample: () => Promise.reject(new Error("no sampling here")),
  answerRound: () => Promise.reject(new Error("no questions here")),
  log: () => undefined,
};

describe("reading a stdio server's large result", () => {
  it("waits in the server's pipe while there is no room, and arrives whole once there is", async () => {
    const server: StdioTestServer = await startTestServer({
      transport: "stdio",
      script: { tools: [{ name: "huge", behavior: { kind: "huge", bytes: 6 * MIB } }] },
    });
    open.push(() => server.dispose());
    let room = false;
    let letIn: () => void = () => undefined;
    let waits = 0;
    const pressure = {
      largeFrom: () => MIB,
      hasRoom: () => room,
      whenRoom: () => {
        waits++;
        return new Promise<void>((resolve) => {
          letIn = resolve;
        });
      },
    };
    const connection = new McpConnection(
      {
        transport: "stdio",
        command: server.command,
        args: server.args,
        env: server.env ?? {},
        cwd: tmpdir(),
      },
      quiet,
      { maxMessageBytes: 16 * MIB, pressure },
    );
    open.push(() => connection.close());
    await connection.connect(new AbortController().signal, 30_000);
    let settled = false;
    const result = connection
      .callTool({ name: "huge", arguments: {} }, { timeoutMs: 60_000, relay })
      .finally(() => {
        settled = true;
      });
    // Past 1 MiB of the message with no room: the reading stopped.
    await expect.poll(() => waits).toBe(1);
    expect(settled).toBe(false);
    room = true;
    letIn();
    const text = ((await result).content as Array<{ text: string }>)[0]?.text ?? "";
    expect({ length: text.length, allX: /^x*$/.test(text), waits }).toEqual({
      length: 6 * MIB,
      allX: true,
      waits: 1,
    });
  });
});

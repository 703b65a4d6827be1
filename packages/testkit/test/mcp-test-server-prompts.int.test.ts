// The MCP test server's prompts, completions and sampling, driven by a real SDK client over stdio.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CreateMessageRequestSchema,
  PromptListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type StdioTestServer,
  startTestServer,
  type TestServerScript,
} from "../src/mcp-test-server/index.js";

const script: TestServerScript = {
  tools: [{ name: "ask-model", behavior: { kind: "sample", prompt: "Name a colour", maxTokens: 5 } }],
  prompts: [
    { name: "plain", description: "No arguments.", text: "Just this." },
    {
      name: "greet",
      arguments: [{ name: "who", required: true }, { name: "mood" }],
      text: "Hello {who}, you seem {mood}.",
    },
    { name: "third" },
  ],
  promptsPageSize: 2,
  completions: { who: ["Ada", "Alan", "Grace"] },
};

describe("the MCP test server's prompts, completions and sampling", () => {
  let server: StdioTestServer;
  let client: Client;
  const sampled: unknown[] = [];

  beforeAll(async () => {
    server = await startTestServer({ script, transport: "stdio" });
    client = new Client({ name: "testkit-test", version: "1.0.0" }, { capabilities: { sampling: {} } });
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      sampled.push(request.params);
      return { role: "assistant", content: { type: "text", text: "teal" }, model: "test-model" };
    });
    await client.connect(
      new StdioClientTransport({ command: server.command, args: server.args, stderr: "pipe" }),
    );
  });
  afterAll(async () => {
    await client?.close();
    await server?.dispose();
  });

  it("declares prompts and completions, and pages prompts/list by promptsPageSize", async () => {
    expect(client.getServerCapabilities()).toMatchObject({ prompts: { listChanged: true }, completions: {} });
    expect(await client.listPrompts()).toEqual({
      prompts: [
        { name: "plain", description: "No arguments." },
        { name: "greet", arguments: [{ name: "who", required: true }, { name: "mood" }] },
      ],
      nextCursor: "2",
    });
    expect(await client.listPrompts({ cursor: "2" })).toEqual({ prompts: [{ name: "third" }] });
  });

  it("fills a prompt's text with its arguments, and refuses an unknown prompt or a missing argument", async () => {
    expect(await client.getPrompt({ name: "greet", arguments: { who: "Ada", mood: "happy" } })).toEqual({
      messages: [{ role: "user", content: { type: "text", text: "Hello Ada, you seem happy." } }],
    });
    await expect(client.getPrompt({ name: "nope" })).rejects.toThrow(
      "MCP error -32602: Unknown prompt: nope",
    );
    await expect(client.getPrompt({ name: "greet", arguments: {} })).rejects.toThrow(
      "MCP error -32602: Missing required argument: who",
    );
  });

  it("completes an argument from the values scripted under its name", async () => {
    expect(
      await client.complete({
        ref: { type: "ref/prompt", name: "greet" },
        argument: { name: "who", value: "A" },
      }),
    ).toEqual({ completion: { values: ["Ada", "Alan"], total: 2, hasMore: false } });
  });

  it("asks the client's model with sampling/createMessage and returns the answer's text", async () => {
    expect(await client.callTool({ name: "ask-model" })).toEqual({
      content: [{ type: "text", text: "teal" }],
    });
    expect(sampled).toEqual([
      { messages: [{ role: "user", content: { type: "text", text: "Name a colour" } }], maxTokens: 5 },
    ]);
  });

  it("sends prompts/list_changed when the script's prompts change", async () => {
    const changed = new Promise<void>((resolve) =>
      client.setNotificationHandler(PromptListChangedNotificationSchema, () => resolve()),
    );
    await server.setScript({ ...script, prompts: [{ name: "fresh" }] });
    await changed;
    expect(await client.listPrompts()).toEqual({ prompts: [{ name: "fresh" }] });
  });
});

/**
 * Upstream prompts, completions and sampling as an MCP client sees them through the gateway: an
 * SDK Client over streamable HTTP, the real catalog and dispatcher (child processes), the
 * testkit's scriptable server and server-everything behind them.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  type CreateMessageRequest,
  CreateMessageRequestSchema,
  McpError,
  PromptListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import {
  type StdioTestServer,
  serverEverythingCommand,
  startTestServer,
  type TestServerScript,
} from "@toolbus/testkit/mcp-test-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayService } from "../src/gateway-service.js";
import { eventually, mcpClient, Stack, tomlFor } from "./support/stack.js";

const alphaScript: TestServerScript = {
  tools: [{ name: "ask", behavior: { kind: "sample", prompt: "Name a colour", maxTokens: 5 } }],
  prompts: [
    {
      name: "greet",
      description: "Greets someone.",
      arguments: [{ name: "who", required: true }, { name: "mood" }],
      text: "Hello {who}, you seem {mood}.",
    },
    { name: "shared", description: "alpha's", text: "from alpha" },
    { name: "say hello", description: "Not a valid MCP name.", text: "hello" },
  ],
  completions: { who: ["Ada", "Alan", "Grace"] },
};

let stack: Stack;
let alpha: StdioTestServer;
let prefixed: GatewayService;
let conditional: GatewayService;
const clients: Client[] = [];

async function client(
  gateway: GatewayService,
  options: Parameters<typeof mcpClient>[1] = {},
): Promise<Client> {
  const connected = await mcpClient(gateway, options);
  clients.push(connected);
  return connected;
}

const names = async (gateway: GatewayService) =>
  (await (await client(gateway)).listPrompts()).prompts.map((prompt) => prompt.name);

beforeAll(async () => {
  alpha = await startTestServer({ transport: "stdio", script: alphaScript });
  const beta = await startTestServer({
    transport: "stdio",
    script: {
      prompts: [
        { name: "shared", description: "beta's", text: "from beta" },
        { name: "only-beta", text: "beta alone" },
      ],
    },
  });
  const everything = serverEverythingCommand();
  stack = await Stack.start(
    "gw_prompts",
    tomlFor([
      { name: "alpha", command: alpha.command, args: alpha.args },
      { name: "beta", command: beta.command, args: beta.args },
      { name: "everything", command: everything.command, args: everything.args },
    ]),
  );
  stack.defer(() => alpha.dispose());
  stack.defer(() => beta.dispose());
  prefixed = await stack.gateway({ naming: "prefixed" });
  conditional = await stack.gateway({ naming: "conditional" });
}, 90_000);

afterAll(async () => {
  for (const connected of clients) await connected.close().catch(() => undefined);
  await stack?.close();
});

describe("prompts/list", () => {
  it("advertises prompts (with list_changed) and completions", async () => {
    expect((await client(prefixed)).getServerCapabilities()).toMatchObject({
      prompts: { listChanged: true },
      completions: {},
    });
  });

  it("names every prompt <server>__<prompt>, sanitized, by default", async () => {
    expect(await names(prefixed)).toEqual([
      "alpha__greet",
      "alpha__say_hello",
      "alpha__shared",
      "beta__only_beta",
      "beta__shared",
      "everything__args_prompt",
      "everything__completable_prompt",
      "everything__resource_prompt",
      "everything__simple_prompt",
    ]);
  });

  it("keeps a prompt's raw name in conditional mode when it is valid and unique across servers", async () => {
    expect(await names(conditional)).toEqual([
      "greet",
      "alpha__say_hello",
      "alpha__shared",
      "only-beta",
      "beta__shared",
      "args-prompt",
      "completable-prompt",
      "resource-prompt",
      "simple-prompt",
    ]);
  });

  it("lists a prompt with the description and arguments its server gave", async () => {
    const { prompts } = await (await client(conditional)).listPrompts();
    expect(prompts.find((prompt) => prompt.name === "greet")).toEqual({
      name: "greet",
      description: "Greets someone.",
      arguments: [{ name: "who", required: true }, { name: "mood" }],
    });
  });
});

describe("prompts/get", () => {
  it("gets a prompt by its exposed name with its arguments, without listing first", async () => {
    expect(
      await (await client(prefixed)).getPrompt({
        name: "alpha__greet",
        arguments: { who: "Ada", mood: "curious" },
      }),
    ).toEqual({
      description: "Greets someone.",
      messages: [{ role: "user", content: { type: "text", text: "Hello Ada, you seem curious." } }],
    });
    expect(
      await (await client(conditional)).getPrompt({ name: "args-prompt", arguments: { city: "Paris" } }),
    ).toEqual({ messages: [{ role: "user", content: { type: "text", text: "What's weather in Paris?" } }] });
  });

  it("routes two servers' prompts of the same raw name to their own servers", async () => {
    const connected = await client(conditional);
    const messages = async (name: string) => (await connected.getPrompt({ name })).messages;
    expect([await messages("alpha__shared"), await messages("beta__shared")]).toEqual([
      [{ role: "user", content: { type: "text", text: "from alpha" } }],
      [{ role: "user", content: { type: "text", text: "from beta" } }],
    ]);
  });

  it("answers an unknown prompt name with invalid params pointing to prompts/list", async () => {
    await expect((await client(prefixed)).getPrompt({ name: "greet" })).rejects.toThrow(
      "MCP error -32602: Unknown prompt: greet. None of the servers toolbus serves lists a prompt by that name; call prompts/list for the current names",
    );
  });

  it("answers a prompt its server refuses with invalid params carrying the server's reason", async () => {
    await expect((await client(conditional)).getPrompt({ name: "greet", arguments: {} })).rejects.toThrow(
      "MCP error -32602: prompts/get failed for `alpha` (greet): MCP error -32602: Missing required argument: who",
    );
  });
});

describe("completion/complete", () => {
  it("completes a prompt argument on the prompt's server", async () => {
    const connected = await client(conditional);
    expect(
      await connected.complete({
        ref: { type: "ref/prompt", name: "greet" },
        argument: { name: "who", value: "A" },
      }),
    ).toEqual({ completion: { values: ["Ada", "Alan"], total: 2, hasMore: false } });
    const department = await connected.complete({
      ref: { type: "ref/prompt", name: "completable-prompt" },
      argument: { name: "department", value: "S" },
    });
    expect(department.completion.values).toEqual(["Sales", "Support"]);
  });

  it("completes a resource template variable on the server that lists the template", async () => {
    const result = await (await client(prefixed)).complete({
      ref: { type: "ref/resource", uri: "demo://resource/dynamic/text/{resourceId}" },
      argument: { name: "resourceId", value: "7" },
    });
    expect(result.completion.values).toEqual(["7"]);
  });

  it("answers no values for a prompt whose server declares no completions", async () => {
    expect(
      await (await client(conditional)).complete({
        ref: { type: "ref/prompt", name: "only-beta" },
        argument: { name: "x", value: "" },
      }),
    ).toEqual({ completion: { values: [], hasMore: false } });
  });

  it("answers an unknown prompt or template with invalid params", async () => {
    const connected = await client(conditional);
    await expect(
      connected.complete({ ref: { type: "ref/prompt", name: "nope" }, argument: { name: "a", value: "" } }),
    ).rejects.toThrow("MCP error -32602: Unknown prompt: nope.");
    await expect(
      connected.complete({
        ref: { type: "ref/resource", uri: "none://{x}" },
        argument: { name: "x", value: "" },
      }),
    ).rejects.toThrow(
      "MCP error -32602: Unknown resource template: none://{x}. No server toolbus serves lists it; call resources/templates/list for the current templates",
    );
  });
});

describe("notifications/prompts/list_changed", () => {
  it("is sent when a server's prompts change, and the new prompt is listed and got", async () => {
    const connected = await client(conditional);
    let changes = 0;
    connected.setNotificationHandler(PromptListChangedNotificationSchema, () => {
      changes += 1;
    });
    await alpha.setScript({
      ...alphaScript,
      prompts: [...(alphaScript.prompts ?? []), { name: "fresh", text: "new" }],
    });
    await eventually("prompts/list_changed", () => (changes > 0 ? true : undefined));
    expect((await connected.listPrompts()).prompts.map((prompt) => prompt.name)).toContain("fresh");
    expect(await connected.getPrompt({ name: "fresh" })).toEqual({
      messages: [{ role: "user", content: { type: "text", text: "new" } }],
    });
  });
});

describe("sampling during a tool call", () => {
  async function samplingClient(gateway: GatewayService, asked: CreateMessageRequest["params"][]) {
    const connected = await client(gateway, { capabilities: { sampling: {} } });
    connected.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      asked.push(request.params);
      return {
        role: "assistant",
        content: { type: "text", text: "teal" },
        model: "test-model",
        stopReason: "endTurn",
      };
    });
    return connected;
  }

  it("puts the server's sampling request to the client and returns the client's answer to the server", async () => {
    const asked: CreateMessageRequest["params"][] = [];
    const connected = await samplingClient(prefixed, asked);
    expect(await connected.callTool({ name: "alpha__ask", arguments: {} })).toEqual({
      content: [{ type: "text", text: "teal" }],
    });
    expect(asked).toEqual([
      { messages: [{ role: "user", content: { type: "text", text: "Name a colour" } }], maxTokens: 5 },
    ]);
  });

  it("relays server-everything's sampling tool, whose result carries the client's answer", async () => {
    const asked: CreateMessageRequest["params"][] = [];
    const connected = await samplingClient(conditional, asked);
    const result = await connected.callTool({
      name: "trigger-sampling-request",
      arguments: { prompt: "What is toolbus?", maxTokens: 20 },
    });
    expect(asked).toEqual([
      {
        messages: [
          {
            role: "user",
            content: { type: "text", text: "Resource trigger-sampling-request context: What is toolbus?" },
          },
        ],
        systemPrompt: "You are a helpful test server.",
        maxTokens: 20,
        temperature: 0.7,
      },
    ]);
    const text = (result.content as Array<{ type: string; text: string }>)[0]?.text ?? "";
    expect(JSON.parse(text.slice(text.indexOf("{")))).toEqual({
      role: "assistant",
      content: { type: "text", text: "teal" },
      model: "test-model",
      stopReason: "endTurn",
    });
  });

  it("gives the server the client's refusal as its error", async () => {
    const connected = await client(prefixed, { capabilities: { sampling: {} } });
    connected.setRequestHandler(CreateMessageRequestSchema, async () => {
      throw new McpError(-1, "User rejected sampling request");
    });
    expect(await connected.callTool({ name: "alpha__ask", arguments: {} })).toEqual({
      content: [
        {
          type: "text",
          text: expect.stringMatching(
            /^MCP error -32600: toolbus could not relay sampling\/createMessage to the caller of tool call gw-[0-9a-f-]+: the MCP client refused \(error -1\): User rejected sampling request$/,
          ),
        },
      ],
      isError: true,
    });
  });

  it("gives the server a clear error when the client did not declare sampling", async () => {
    expect(await (await client(prefixed)).callTool({ name: "alpha__ask", arguments: {} })).toEqual({
      content: [
        {
          type: "text",
          text: expect.stringMatching(
            /^MCP error -32600: toolbus could not relay sampling\/createMessage to the caller of tool call gw-[0-9a-f-]+: the MCP client that called this tool did not declare the sampling capability, so toolbus cannot ask it for alpha's sampling\/createMessage; call the tool from a client that supports sampling$/,
          ),
        },
      ],
      isError: true,
    });
  });
});

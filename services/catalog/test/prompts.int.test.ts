// Prompts, completions and sampling through real servers: every server's prompts (all pages,
// sorted by server, servers without prompts left out), one page of one server, a prompt got with
// its arguments and the server's refusals, completions forwarded only where declared,
// prompts/list_changed published, and a server's sampling request relayed to the caller of the
// call in flight (or refused with a clear error when nobody can answer it).

import { CALL_HOLD_MS } from "@toolbus/protocol";
import {
  type StdioTestServer,
  startTestServer,
  type TestServerScript,
} from "@toolbus/testkit/mcp-test-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CatalogHarness, eventually, type RunningService, toolbusToml } from "./support/harness.js";
import { rawServer } from "./support/raw-server.js";

const failure = (code: string, message: string, retryable: boolean) => ({
  ok: false,
  error: { code, message, retryable },
});

const docsScript: TestServerScript = {
  tools: [
    { name: "ask", behavior: { kind: "sample", prompt: "Name a colour", maxTokens: 5 } },
    { name: "ask-later", behavior: { kind: "sample", prompt: "Too late", afterMs: 50 } },
  ],
  prompts: [
    { name: "plain", description: "No arguments.", text: "Just this." },
    {
      name: "greet",
      description: "Greets someone.",
      arguments: [{ name: "who", required: true }, { name: "mood" }],
      text: "Hello {who}, you seem {mood}.",
    },
    { name: "third", text: "Three." },
  ],
  promptsPageSize: 2,
  completions: { who: ["Ada", "Alan", "Grace"] },
};

let harness: CatalogHarness;
let running: RunningService;
let docs: StdioTestServer;

beforeAll(async () => {
  harness = await CatalogHarness.create("prompts");
  docs = await startTestServer({ transport: "stdio", script: docsScript });
  const notes = await startTestServer({
    transport: "stdio",
    script: { prompts: [{ name: "summarize", description: "Summarize the notes." }] },
  });
  const plain = await startTestServer({ transport: "stdio", script: { tools: [{ name: "echo" }] } });
  // Servers that break the rules: a prompt without a name and a malformed prompts/get result, and a
  // listing whose cursor repeats.
  const odd = await rawServer({
    promptPages: [{ prompts: [{ name: "fine" }, { description: "no name" }] }],
    promptResult: { messages: [{ role: "user", content: { type: "text" } }] },
  });
  const looping = await rawServer({
    promptPages: [
      { prompts: [{ name: "a" }], nextCursor: "again" },
      { cursor: "again", prompts: [{ name: "b" }], nextCursor: "again" },
    ],
  });
  for (const server of [docs, notes, plain, odd, looping]) harness.defer(() => server.dispose());
  running = await harness.start(
    toolbusToml({
      servers: Object.fromEntries(
        Object.entries({ notes, docs, plain, odd, looping }).map(([name, s]) => [
          name,
          { command: s.command, args: s.args },
        ]),
      ),
    }),
  );
  expect(await running.service.startup).toEqual({
    ready: ["docs", "looping", "notes", "odd", "plain"],
    failed: [],
    cancelled: [],
  });
}, 60_000);
afterAll(async () => {
  await harness?.close();
});

describe("prompts", () => {
  it("records in each entry whether the server declared prompts and completions", async () => {
    const declared = async (server: string) => {
      const entry = await harness.entry(server);
      return { prompts: entry?.promptsSupported, completions: entry?.completionsSupported };
    };
    expect({
      docs: await declared("docs"),
      notes: await declared("notes"),
      plain: await declared("plain"),
    }).toEqual({
      docs: { prompts: true, completions: true },
      notes: { prompts: true, completions: false },
      plain: { prompts: false, completions: false },
    });
  });

  it("lists every server's prompts, all pages, sorted by server, without servers that have none", async () => {
    expect(await harness.ok(harness.subjects.catalogPromptsList, {})).toEqual({
      prompts: [
        { server: "docs", name: "plain", description: "No arguments." },
        {
          server: "docs",
          name: "greet",
          description: "Greets someone.",
          arguments: [{ name: "who", required: true }, { name: "mood" }],
        },
        { server: "docs", name: "third" },
        { server: "notes", name: "summarize", description: "Summarize the notes." },
        { server: "odd", name: "fine" },
      ],
    });
    expect(
      running.logs.find(
        (line) => line.server === "looping" && line.msg === "prompts/list failed; the server is left out",
      ),
    ).toMatchObject({
      err: {
        message: "prompts/list failed for `looping`: prompts/list returned a repeated pagination cursor",
      },
    });
  });

  it("leaves a malformed prompt out of the listing and logs it, and refuses a malformed prompts/get result", async () => {
    expect(await harness.ok(harness.subjects.catalogPromptsList, { server: "odd" })).toEqual({
      prompts: [{ server: "odd", name: "fine" }],
    });
    expect(
      running.logs.find((line) => line.msg === "the server listed malformed prompts; they are left out"),
    ).toMatchObject({ server: "odd", rejected: [{ description: "no name" }], count: 1 });
    expect(
      await harness.request(harness.subjects.catalogPromptsGet, { server: "odd", name: "fine" }),
    ).toEqual(
      failure(
        "transport_error",
        "prompts/get failed for `odd` (fine): the server's result is malformed (messages.0.content.text: Invalid input: expected string, received undefined)",
        true,
      ),
    );
  });

  it("lists one page of one server's prompts with the cursor to the next, and none for a server without prompts", async () => {
    expect(await harness.ok(harness.subjects.catalogPromptsList, { server: "docs" })).toEqual({
      prompts: [
        { server: "docs", name: "plain", description: "No arguments." },
        {
          server: "docs",
          name: "greet",
          description: "Greets someone.",
          arguments: [{ name: "who", required: true }, { name: "mood" }],
        },
      ],
      nextCursor: "2",
    });
    expect(await harness.ok(harness.subjects.catalogPromptsList, { server: "docs", cursor: "2" })).toEqual({
      prompts: [{ server: "docs", name: "third" }],
    });
    expect(await harness.ok(harness.subjects.catalogPromptsList, { server: "plain" })).toEqual({
      prompts: [],
    });
  });

  it("refuses a cursor without a server, and an unknown server", async () => {
    expect(await harness.request(harness.subjects.catalogPromptsList, { cursor: "2" })).toEqual(
      failure("bad_request", "cursor can only be used when a server is specified", false),
    );
    expect(await harness.request(harness.subjects.catalogPromptsList, { server: "nope" })).toEqual(
      failure("bad_request", "unknown MCP server 'nope'", false),
    );
  });

  it("gets a prompt with its arguments filled in", async () => {
    expect(
      await harness.ok(harness.subjects.catalogPromptsGet, {
        server: "docs",
        name: "greet",
        arguments: { who: "Ada", mood: "curious" },
      }),
    ).toEqual({
      description: "Greets someone.",
      messages: [{ role: "user", content: { type: "text", text: "Hello Ada, you seem curious." } }],
    });
  });

  it("answers bad_request with the server's own words when it refuses the prompt, and names a server without prompts", async () => {
    expect(
      await harness.request(harness.subjects.catalogPromptsGet, { server: "docs", name: "nope" }),
    ).toEqual(
      failure(
        "bad_request",
        "prompts/get failed for `docs` (nope): MCP error -32602: Unknown prompt: nope",
        false,
      ),
    );
    expect(
      await harness.request(harness.subjects.catalogPromptsGet, {
        server: "docs",
        name: "greet",
        arguments: {},
      }),
    ).toEqual(
      failure(
        "bad_request",
        "prompts/get failed for `docs` (greet): MCP error -32602: Missing required argument: who",
        false,
      ),
    );
    expect(await harness.request(harness.subjects.catalogPromptsGet, { server: "plain", name: "x" })).toEqual(
      failure(
        "bad_request",
        "MCP server 'plain' has no prompts (it did not declare the prompts capability); catalog.prompts.list shows every server's prompts",
        false,
      ),
    );
  });

  it("publishes the server's prompts/list_changed, and the next listing shows the change", async () => {
    const changes = harness.collect(harness.subjects.promptsEvent);
    await harness.nc.flush();
    await docs.setScript({ ...docsScript, prompts: [...(docsScript.prompts ?? []), { name: "fourth" }] });
    await eventually("the prompts event", () => (changes.length > 0 ? true : undefined));
    expect(changes).toEqual([{ server: "docs", at: expect.any(String) }]);
    const { prompts } = await harness.ok<{ prompts: Array<{ name: string }> }>(
      harness.subjects.catalogPromptsList,
      {
        server: "docs",
        cursor: "2",
      },
    );
    expect(prompts.map((prompt) => prompt.name)).toEqual(["third", "fourth"]);
    await docs.setScript(docsScript);
  });
});

describe("completions", () => {
  it("forwards completion/complete to a server that declared completions", async () => {
    expect(
      await harness.ok(harness.subjects.catalogCompletionComplete, {
        server: "docs",
        ref: { type: "ref/prompt", name: "greet" },
        argument: { name: "who", value: "A" },
      }),
    ).toEqual({ completion: { values: ["Ada", "Alan"], total: 2, hasMore: false } });
    expect(
      await harness.ok(harness.subjects.catalogCompletionComplete, {
        server: "docs",
        ref: { type: "ref/resource", uri: "test://t/{who}" },
        argument: { name: "who", value: "G" },
        context: { arguments: {} },
      }),
    ).toEqual({ completion: { values: ["Grace"], total: 1, hasMore: false } });
  });

  it("answers no values for a server that declared no completions, without asking it", async () => {
    expect(
      await harness.ok(harness.subjects.catalogCompletionComplete, {
        server: "notes",
        ref: { type: "ref/prompt", name: "summarize" },
        argument: { name: "topic", value: "x" },
      }),
    ).toEqual({ completion: { values: [], hasMore: false } });
  });
});

describe("sampling during a call", () => {
  async function call(callId: string, tool: string) {
    return harness.ok<{ result: unknown }>(harness.subjects.connectorCall("docs"), {
      callId,
      tool,
      preparedRevision: (await harness.entry("docs"))!.revision,
    });
  }

  it("asks whoever answers on the call's sampling subject, and gives the server the answer", async () => {
    const asked: unknown[] = [];
    const answerer = harness.nc.subscribe(harness.subjects.callRelay("call-sample", "docs", "sampling"), {
      callback: (_error, msg) => {
        asked.push(msg.json());
        msg.respond(
          JSON.stringify({
            ok: true,
            result: { role: "assistant", content: { type: "text", text: "teal" }, model: "test-model" },
          }),
        );
      },
    });
    await harness.nc.flush();
    try {
      expect(await call("call-sample", "ask")).toEqual({
        result: { content: [{ type: "text", text: "teal" }] },
      });
    } finally {
      answerer.unsubscribe();
    }
    expect(asked).toEqual([
      {
        callId: "call-sample",
        server: "docs",
        // Held (contract.md "While a call runs"): one question, sent again under its relayId.
        relayId: expect.any(String),
        holdMs: CALL_HOLD_MS,
        request: {
          messages: [{ role: "user", content: { type: "text", text: "Name a colour" } }],
          maxTokens: 5,
        },
      },
    ]);
  });

  it("gives the server the caller's refusal as an error saying why", async () => {
    const answerer = harness.nc.subscribe(harness.subjects.callRelay("call-refused", "docs", "sampling"), {
      callback: (_error, msg) => {
        msg.respond(
          JSON.stringify({
            ok: false,
            error: {
              code: "bad_request",
              message: "the MCP client did not declare sampling",
              retryable: false,
            },
          }),
        );
      },
    });
    await harness.nc.flush();
    try {
      expect(await call("call-refused", "ask")).toEqual({
        result: {
          content: [
            {
              type: "text",
              text: "MCP error -32600: toolbus could not relay sampling/createMessage to the caller of tool call call-refused: the MCP client did not declare sampling",
            },
          ],
          isError: true,
        },
      });
    } finally {
      answerer.unsubscribe();
    }
  });

  it("gives the server a clear error when nobody listens for the call's sampling requests", async () => {
    expect(await call("call-alone", "ask")).toEqual({
      result: {
        content: [
          {
            type: "text",
            text: "MCP error -32600: toolbus could not relay sampling/createMessage to the caller of tool call call-alone: the call did not come from an MCP client that can answer sampling (nobody listens for it)",
          },
        ],
        isError: true,
      },
    });
  });

  it("refuses a sampling request made when no call is running, saying so", async () => {
    expect(await call("call-later", "ask-later")).toEqual({
      result: { content: [{ type: "text", text: "scheduled" }] },
    });
    const outcome = await eventually("the server's sampling outcome", () =>
      running.logs
        .map((line) => line.stderr)
        .find((line): line is string => typeof line === "string" && line.includes("sampling outcome")),
    );
    expect(outcome).toContain(
      "sampling outcome: MCP error -32600: toolbus relays sampling/createMessage only to the MCP client that made the tool call it belongs to; no tool call of this server is running now",
    );
  });
});

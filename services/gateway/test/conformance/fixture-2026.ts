/**
 * The 2026-07-28 upstream for the MCP conformance suite (@modelcontextprotocol/conformance
 * 0.2.0-alpha.12, server mode, `--spec-version 2026-07-28`): a server that speaks protocol
 * revision 2026-07-28 ONLY, over streamable HTTP, built on the v2 SDK's `createMcpHandler`
 * with `legacy: "reject"`. It carries what those scenarios ask of a server that the 2025 fixture
 * (fixture-server.ts) cannot: the `input_required` tools and prompt (SEP-2322), the diagnostic
 * tools of `server-stateless` (SEP-2575) and a tool whose arguments are mirrored into
 * `Mcp-Param-*` headers (SEP-2243). No tool or prompt name is shared with fixture-server.ts, so a
 * gateway can serve both upstreams at once under naming "conditional".
 *
 * What the SDK does here, not this file: `server/discover`, the per-request `_meta` checks, the
 * refusal of 2025 requests, the `Mcp-Param-*` header checks (only for an `McpServer`'s registered
 * tools), the log-level filter of `ctx.mcpReq.log` (by the request's
 * `io.modelcontextprotocol/logLevel`; nothing when it names none), `subscriptions/listen`, the
 * -32021 refusal (HTTP 400) of an input request the request's clientCapabilities do not cover,
 * and the HMAC check of an echoed requestState (createRequestStateCodec; a bad one is -32602).
 *
 * Run: `node --import tsx fixture-2026.ts [--port N]`; prints `LISTENING <url>`.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import { parseArgs } from "node:util";
import {
  acceptedContent,
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  createMcpHandler,
  createRequestStateCodec,
  fromJsonSchema,
  type GetPromptResult,
  hostHeaderValidationResponse,
  type InputRequest,
  type InputRequiredResult,
  inputRequired,
  inputResponse,
  localhostAllowedHostnames,
  McpServer,
  type ServerContext,
} from "@modelcontextprotocol/server";

const MCP_PATH = "/mcp";

/** What a minted requestState carries: the tool (or prompt) that minted it and its round. */
interface FlowState {
  flow: string;
  round: number;
  /** What earlier rounds were told (the multi-round tool's name from round 1). */
  answers?: Record<string, string>;
}

/**
 * requestState is signed with a key that lives as long as this process (every round of a flow
 * reaches this one process), so a state altered by the client fails its MAC check and the SDK
 * answers -32602 before a handler runs.
 */
const stateCodec = createRequestStateCodec<FlowState>({ key: randomBytes(32) });

/** Tools and prompts `test_trigger_*_change` add and remove, so their lists really change. */
const DYNAMIC_TOOL = "test_fixture_2026_dynamic_tool";
const DYNAMIC_PROMPT = "test_fixture_2026_dynamic_prompt";
const dynamic = { tool: false, prompt: false };

const NAME_SCHEMA = {
  type: "object" as const,
  properties: { name: { type: "string" as const } },
  required: ["name"],
};

/** `x-mcp-header` is no JSON Schema keyword (so not in the SDK's schema type); it is listed as is. */
const REGION_SCHEMA = {
  type: "object" as const,
  properties: { region: { type: "string" as const, "x-mcp-header": "Region" } },
  required: ["region"],
};

type Result = CallToolResult | InputRequiredResult;
const text = (value: string): CallToolResult => ({ content: [{ type: "text", text: value }] });

function declaredCapabilities(ctx: ServerContext): ClientCapabilities {
  // The SDK types the envelope as `{}`; the key is there when the request carried it.
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  return (envelope?.[CLIENT_CAPABILITIES_META_KEY] ?? {}) as ClientCapabilities;
}

/**
 * The verified state of this round when `flow` minted it. A state another flow minted (genuine,
 * but replayed onto this tool) is not trusted: the flow starts over. (An McpServer tool cannot
 * answer with a JSON-RPC error of its own: whatever its handler throws becomes an isError result.)
 */
function stateOf(ctx: ServerContext, flow: string): FlowState | undefined {
  const state = ctx.mcpReq.requestState<FlowState>();
  return state?.flow === flow ? state : undefined;
}

function mint(flow: string, round: number, answers?: Record<string, string>): Promise<string> {
  return stateCodec.mint({ flow, round, ...(answers ? { answers } : {}) });
}

/** An accepted elicitation's string field `field` under `key`, or undefined (missing, declined, malformed). */
function elicited(ctx: ServerContext, key: string, field: string): string | undefined {
  const value = acceptedContent(ctx.mcpReq.inputResponses, key)?.[field];
  return typeof value === "string" ? value : undefined;
}

function askName(message: string): InputRequest {
  return inputRequired.elicit({ message, requestedSchema: NAME_SCHEMA });
}

function samplingRequest(prompt: string, maxTokens: number): InputRequest {
  return inputRequired.createMessage({
    messages: [{ role: "user", content: { type: "text", text: prompt } }],
    maxTokens,
  });
}

function samplingText(ctx: ServerContext, key: string): string | undefined {
  const answer = inputResponse(ctx.mcpReq.inputResponses, key);
  if (answer.kind !== "sampling") return undefined;
  const content = answer.result.content;
  return !Array.isArray(content) && content.type === "text" ? content.text : JSON.stringify(content);
}

function rootsOf(ctx: ServerContext, key: string): string[] | undefined {
  const answer = inputResponse(ctx.mcpReq.inputResponses, key);
  return answer.kind === "roots" ? answer.roots.map((root) => root.uri) : undefined;
}

/** input-required-result-basic-elicitation (and the scenarios that reuse its tool). */
function elicitationTool(ctx: ServerContext): Result {
  const name = elicited(ctx, "user_name", "name");
  if (name === undefined)
    return inputRequired({ inputRequests: { user_name: askName("What is your name?") } });
  return text(`Hello, ${name}!`);
}

function samplingTool(ctx: ServerContext): Result {
  const answer = samplingText(ctx, "capital_question");
  if (answer === undefined)
    return inputRequired({
      inputRequests: { capital_question: samplingRequest("What is the capital of France?", 100) },
    });
  return text(`LLM response: ${answer}`);
}

function listRootsTool(ctx: ServerContext): Result {
  const roots = rootsOf(ctx, "client_roots");
  if (roots === undefined)
    return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } });
  return text(`Client roots: ${roots.join(", ") || "(none)"}`);
}

/** request-state and tampered-state: one confirmation, carried across by a signed requestState. */
async function confirmTool(ctx: ServerContext, flow: string): Promise<Result> {
  const state = stateOf(ctx, flow);
  const confirmed = acceptedContent(ctx.mcpReq.inputResponses, "confirm")?.ok;
  if (state === undefined || typeof confirmed !== "boolean") {
    return inputRequired({
      inputRequests: {
        confirm: inputRequired.elicit({
          message: "Please confirm",
          requestedSchema: {
            type: "object",
            properties: { ok: { type: "boolean" } },
            required: ["ok"],
          },
        }),
      },
      requestState: await mint(flow, 1),
    });
  }
  return text(`state-ok: requestState verified (round ${state.round}), confirmed=${confirmed}`);
}

async function multipleInputsTool(ctx: ServerContext): Promise<Result> {
  const state = stateOf(ctx, "multiple_inputs");
  const name = elicited(ctx, "user_name", "name");
  const greeting = samplingText(ctx, "greeting");
  const roots = rootsOf(ctx, "client_roots");
  if (state === undefined || name === undefined || greeting === undefined || roots === undefined) {
    return inputRequired({
      inputRequests: {
        user_name: askName("What is your name?"),
        greeting: samplingRequest("Generate a greeting", 50),
        client_roots: inputRequired.listRoots(),
      },
      requestState: await mint("multiple_inputs", 1),
    });
  }
  return text(`${greeting} ${name} (roots: ${roots.join(", ") || "none"})`);
}

/** Three rounds: a name, then a colour (the name kept in the new requestState), then the result. */
async function multiRoundTool(ctx: ServerContext): Promise<Result> {
  const state = stateOf(ctx, "multi_round");
  if (state?.round === 2) {
    const color = elicited(ctx, "step2", "color");
    const name = state.answers?.name;
    if (color !== undefined && name !== undefined) return text(`${name}'s favorite color is ${color}`);
  }
  const name = state?.round === 1 ? elicited(ctx, "step1", "name") : undefined;
  if (name !== undefined || state?.round === 2) {
    return inputRequired({
      inputRequests: {
        step2: inputRequired.elicit({
          message: "Step 2: What is your favorite color?",
          requestedSchema: {
            type: "object",
            properties: { color: { type: "string" } },
            required: ["color"],
          },
        }),
      },
      requestState: await mint("multi_round", 2, { name: name ?? state?.answers?.name ?? "" }),
    });
  }
  return inputRequired({
    inputRequests: { step1: askName("Step 1: What is your name?") },
    requestState: await mint("multi_round", 1),
  });
}

/** Asks only for what the request's clientCapabilities declare (the SDK refuses the rest with -32021). */
function capabilitiesTool(ctx: ServerContext): Result {
  const declared = declaredCapabilities(ctx);
  const answered = Object.keys(ctx.mcpReq.inputResponses ?? {});
  if (answered.length > 0) return text(`Received input for: ${answered.sort().join(", ")}`);
  const inputRequests: Record<string, InputRequest> = {};
  if (declared.elicitation) inputRequests.user_name = askName("What is your name?");
  if (declared.sampling) inputRequests.greeting = samplingRequest("Generate a greeting", 50);
  if (declared.roots) inputRequests.client_roots = inputRequired.listRoots();
  if (Object.keys(inputRequests).length === 0)
    return text("The client declared none of elicitation, sampling and roots: nothing to ask");
  return inputRequired({ inputRequests });
}

/**
 * server-stateless: needs sampling. It asks for it whatever the request declares: the SDK refuses
 * an input request the request's clientCapabilities do not cover with -32021 (HTTP 400) and
 * `data.requiredCapabilities = { sampling: {} }`. (Thrown from the handler, the error would become
 * an isError result.)
 */
function missingCapabilityTool(ctx: ServerContext): Result {
  const answer = samplingText(ctx, "completion");
  if (answer === undefined)
    return inputRequired({ inputRequests: { completion: samplingRequest("Say something", 20) } });
  return text(`LLM response: ${answer}`);
}

/** server-stateless: a question to the user travels as input_required, never as a request on the stream. */
function streamingElicitationTool(ctx: ServerContext): Result {
  const name = elicited(ctx, "user_name", "name");
  if (name === undefined)
    return inputRequired({ inputRequests: { user_name: askName("What is your name?") } });
  return text(`Hello, ${name}!`);
}

/** server-stateless: logs at three levels; the SDK sends those at or above the request's logLevel. */
async function loggingTool(ctx: ServerContext): Promise<Result> {
  await ctx.mcpReq.log("debug", "test_logging_tool: debug message");
  await ctx.mcpReq.log("info", "test_logging_tool: info message");
  await ctx.mcpReq.log("warning", "test_logging_tool: warning message");
  return text("Logged at debug, info and warning");
}

function buildServer(notify: { toolsChanged(): void; promptsChanged(): void }): McpServer {
  const server = new McpServer(
    { name: "conformance-fixture-2026", version: "1.0.0" },
    {
      capabilities: {
        tools: { listChanged: true },
        prompts: { listChanged: true },
        logging: {},
      },
      requestState: { verify: stateCodec.verify },
    },
  );
  const tool = (name: string, description: string, run: (ctx: ServerContext) => Result | Promise<Result>) =>
    server.registerTool(name, { description }, (ctx) => run(ctx));

  tool("test_input_required_result_elicitation", "Asks the user's name (user_name).", elicitationTool);
  tool("test_input_required_result_sampling", "Asks the client's LLM (capital_question).", samplingTool);
  tool("test_input_required_result_list_roots", "Asks for the client's roots (client_roots).", listRootsTool);
  tool(
    "test_input_required_result_request_state",
    "Asks for a confirmation with a signed requestState.",
    (ctx) => confirmTool(ctx, "request_state"),
  );
  tool("test_input_required_result_tampered_state", "Refuses a requestState that fails its HMAC.", (ctx) =>
    confirmTool(ctx, "tampered_state"),
  );
  tool(
    "test_input_required_result_multiple_inputs",
    "Asks for an elicitation, a sampling and the roots at once.",
    multipleInputsTool,
  );
  tool(
    "test_input_required_result_multi_round",
    "Asks in two rounds, a new requestState each.",
    multiRoundTool,
  );
  tool(
    "test_input_required_result_capabilities",
    "Asks only for what the request's clientCapabilities declare.",
    capabilitiesTool,
  );
  tool("test_missing_capability", "Needs the client's sampling capability.", missingCapabilityTool);
  tool("test_streaming_elicitation", "Asks the user through input_required.", streamingElicitationTool);
  tool("test_logging_tool", "Sends log messages at debug, info and warning.", loggingTool);
  tool("test_trigger_tool_change", `Adds or removes ${DYNAMIC_TOOL} and says the tool list changed.`, () => {
    dynamic.tool = !dynamic.tool;
    notify.toolsChanged();
    return text(`${DYNAMIC_TOOL} is now ${dynamic.tool ? "listed" : "gone"}`);
  });
  tool(
    "test_trigger_prompt_change",
    `Adds or removes ${DYNAMIC_PROMPT} and says the prompt list changed.`,
    () => {
      dynamic.prompt = !dynamic.prompt;
      notify.promptsChanged();
      return text(`${DYNAMIC_PROMPT} is now ${dynamic.prompt ? "listed" : "gone"}`);
    },
  );
  if (dynamic.tool)
    tool(DYNAMIC_TOOL, "Listed between two calls of test_trigger_tool_change.", () => text("ok"));

  // SEP-2243: `region` is mirrored into Mcp-Param-Region; the SDK checks the header against the body.
  server.registerTool(
    "test_mcp_param_header",
    {
      description: "Echoes its region argument, which clients mirror into the Mcp-Param-Region header.",
      inputSchema: fromJsonSchema<{ region: string }>(REGION_SCHEMA),
    },
    ({ region }) => text(`region=${region}`),
  );

  server.registerPrompt(
    "test_input_required_result_prompt",
    { description: "Asks for the context (user_context) before it is rendered." },
    (ctx): GetPromptResult | InputRequiredResult => {
      const context = elicited(ctx, "user_context", "context");
      if (context === undefined) {
        return inputRequired({
          inputRequests: {
            user_context: inputRequired.elicit({
              message: "What context should the prompt use?",
              requestedSchema: {
                type: "object",
                properties: { context: { type: "string" } },
                required: ["context"],
              },
            }),
          },
        });
      }
      return {
        messages: [
          { role: "user", content: { type: "text", text: `A prompt for this context: ${context}` } },
        ],
      };
    },
  );
  if (dynamic.prompt) {
    server.registerPrompt(
      DYNAMIC_PROMPT,
      { description: "Listed between two calls of test_trigger_prompt_change." },
      () => ({ messages: [{ role: "user", content: { type: "text", text: "dynamic" } }] }),
    );
  }
  return server;
}

async function serve(port: number): Promise<string> {
  // Each request gets its own McpServer built from the current lists; `notify` reaches the
  // subscriptions/listen streams the handler holds open.
  const handler = createMcpHandler(() => buildServer(handler.notify), { legacy: "reject" });
  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      process.stderr.write(`fixture-2026: ${(error as Error).stack ?? String(error)}\n`);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname !== MCP_PATH) {
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
    }
    const request = new Request(url, {
      method: req.method ?? "GET",
      headers,
      ...(req.method === "POST" ? { body: Buffer.concat(chunks) } : {}),
    });
    const response =
      hostHeaderValidationResponse(request, localhostAllowedHostnames()) ?? (await handler.fetch(request));
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body === null) {
      res.end();
      return;
    }
    // Streamed as it comes: a subscriptions/listen answer is an event stream that lasts.
    const abort = new AbortController();
    res.once("close", () => abort.abort());
    await pipeline(Readable.fromWeb(response.body as NodeReadableStream), res, {
      signal: abort.signal,
    }).catch(() => undefined);
  };
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(port, "127.0.0.1", () => resolve());
  });
  const address = http.address();
  const bound = typeof address === "object" && address ? address.port : port;
  return `http://127.0.0.1:${bound}${MCP_PATH}`;
}

const { values } = parseArgs({ options: { port: { type: "string", default: "0" } }, strict: true });
process.stdout.write(`LISTENING ${await serve(Number(values.port))}\n`);

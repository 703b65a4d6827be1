/**
 * The upstream fixture for the MCP conformance suite (@modelcontextprotocol/conformance 0.1.16,
 * server mode): every tool, resource, template and prompt its scenarios ask for, built from the
 * "Server Implementation Requirements" each scenario ships. Runs over stdio (as a toolbus
 * server behind the catalog) or, with `--http [--port N]`, as a streamable HTTP server that
 * prints `LISTENING <url>` (the suite run against it directly).
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  CompleteRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  GetPromptRequestSchema,
  isInitializeRequest,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  type LoggingLevel,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

const RED_PIXEL_PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
const SILENT_WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";
const NO_ARGUMENTS = { type: "object", properties: {} } as const;

/**
 * Behind toolbus the catalog's stdio client runs notification handlers a microtask after it
 * reads them, so a notification read together with the result can be lost there. A short
 * pause after the last notification keeps this fixture from depending on that race.
 */
const SETTLE_MS = 50;

const TOOLS = [
  { name: "test_simple_text", description: "Returns a simple text response.", inputSchema: NO_ARGUMENTS },
  { name: "test_image_content", description: "Returns a PNG image.", inputSchema: NO_ARGUMENTS },
  { name: "test_audio_content", description: "Returns a WAV audio clip.", inputSchema: NO_ARGUMENTS },
  {
    name: "test_embedded_resource",
    description: "Returns an embedded text resource.",
    inputSchema: NO_ARGUMENTS,
  },
  {
    name: "test_multiple_content_types",
    description: "Returns text, an image and an embedded resource.",
    inputSchema: NO_ARGUMENTS,
  },
  {
    name: "test_tool_with_logging",
    description: "Sends three log messages while it runs.",
    inputSchema: NO_ARGUMENTS,
  },
  { name: "test_error_handling", description: "Always returns an error result.", inputSchema: NO_ARGUMENTS },
  {
    name: "test_tool_with_progress",
    description: "Reports progress 0, 50 and 100 of 100.",
    inputSchema: NO_ARGUMENTS,
  },
  {
    name: "test_sampling",
    description: "Asks the client's LLM to complete a prompt.",
    inputSchema: {
      type: "object",
      properties: { prompt: { type: "string", description: "The prompt to send to the LLM" } },
      required: ["prompt"],
    },
  },
  {
    name: "test_elicitation",
    description: "Asks the user for a username and an email address.",
    inputSchema: {
      type: "object",
      properties: { message: { type: "string", description: "The message to show the user" } },
      required: ["message"],
    },
  },
  {
    name: "test_elicitation_sep1034_defaults",
    description: "Elicits a form whose fields have default values (SEP-1034).",
    inputSchema: NO_ARGUMENTS,
  },
  {
    name: "test_elicitation_sep1330_enums",
    description: "Elicits a form with every enum variant (SEP-1330).",
    inputSchema: NO_ARGUMENTS,
  },
  {
    name: "json_schema_2020_12_tool",
    description: "Tool with JSON Schema 2020-12 features",
    // The vocabulary SEP-2106 lets a schema use: an $anchor, composition and conditionals.
    inputSchema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      $defs: {
        address: {
          $anchor: "addressDef",
          type: "object",
          properties: { street: { type: "string" }, city: { type: "string" } },
        },
      },
      properties: {
        name: { type: "string" },
        address: { $ref: "#/$defs/address" },
        contactMethod: { type: "string", enum: ["phone", "email"] },
        phone: { type: "string" },
        email: { type: "string" },
      },
      allOf: [{ anyOf: [{ required: ["phone"] }, { required: ["email"] }] }],
      if: { properties: { contactMethod: { const: "phone" } }, required: ["contactMethod"] },
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else, in a schema never awaited
      then: { required: ["phone"] },
      else: { required: ["email"] },
      additionalProperties: false,
    },
  },
  {
    name: "test_reconnection",
    description: "Answers after a short pause (SSE polling).",
    inputSchema: NO_ARGUMENTS,
  },
  {
    // 2026-07-28's http-custom-header-server-validation calls the first tool with one (SEP-2243).
    name: "test_custom_header",
    description: "Echoes its arguments; a client mirrors region into the Mcp-Param-Region header.",
    inputSchema: {
      type: "object",
      properties: { region: { type: "string", "x-mcp-header": "Region" } },
      required: ["region"],
    },
  },
];

const RESOURCES = [
  {
    uri: "test://static-text",
    name: "static-text",
    description: "A static text resource.",
    mimeType: "text/plain",
    text: "This is the content of the static text resource.",
  },
  {
    uri: "test://static-binary",
    name: "static-binary",
    description: "A static binary resource (a PNG image).",
    mimeType: "image/png",
    blob: RED_PIXEL_PNG,
  },
  {
    uri: "test://watched-resource",
    name: "watched-resource",
    description: "A resource clients may subscribe to.",
    mimeType: "text/plain",
    text: "Watched resource content",
  },
];

const TEMPLATE = {
  uriTemplate: "test://template/{id}/data",
  name: "template-data",
  description: "JSON data for an id.",
  mimeType: "application/json",
};

const PROMPTS = [
  { name: "test_simple_prompt", description: "A prompt without arguments." },
  {
    name: "test_prompt_with_arguments",
    description: "A prompt with two arguments.",
    arguments: [
      { name: "arg1", description: "First test argument", required: true },
      { name: "arg2", description: "Second test argument", required: true },
    ],
  },
  {
    name: "test_prompt_with_embedded_resource",
    description: "A prompt that embeds a resource.",
    arguments: [{ name: "resourceUri", description: "URI of the resource to embed", required: true }],
  },
  { name: "test_prompt_with_image", description: "A prompt with an image." },
];

const LEVELS: readonly LoggingLevel[] = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
];

function buildServer(): Server {
  const server = new Server(
    { name: "conformance-fixture", version: "1.0.0" },
    {
      capabilities: {
        tools: {},
        resources: { subscribe: true },
        prompts: {},
        completions: {},
        logging: {},
      },
    },
  );
  let minimumLevel: LoggingLevel | undefined;
  const subscriptions = new Set<string>();

  server.setRequestHandler(SetLevelRequestSchema, async (request) => {
    minimumLevel = request.params.level;
    return {};
  });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const args = request.params.arguments ?? {};
    const text = (value: string): CallToolResult => ({ content: [{ type: "text", text: value }] });
    const log = async (data: string) => {
      if (minimumLevel !== undefined && LEVELS.indexOf("info") < LEVELS.indexOf(minimumLevel)) return;
      await extra.sendNotification({ method: "notifications/message", params: { level: "info", data } });
    };
    const capabilities = server.getClientCapabilities() ?? {};
    switch (request.params.name) {
      case "test_simple_text":
        return text("This is a simple text response for testing.");
      case "test_image_content":
        return { content: [{ type: "image", data: RED_PIXEL_PNG, mimeType: "image/png" }] };
      case "test_audio_content":
        return { content: [{ type: "audio", data: SILENT_WAV, mimeType: "audio/wav" }] };
      case "test_embedded_resource":
        return {
          content: [
            {
              type: "resource",
              resource: {
                uri: "test://embedded-resource",
                mimeType: "text/plain",
                text: "This is an embedded resource content.",
              },
            },
          ],
        };
      case "test_multiple_content_types":
        return {
          content: [
            { type: "text", text: "Multiple content types test:" },
            { type: "image", data: RED_PIXEL_PNG, mimeType: "image/png" },
            {
              type: "resource",
              resource: {
                uri: "test://mixed-content-resource",
                mimeType: "application/json",
                text: JSON.stringify({ test: "data", value: 123 }),
              },
            },
          ],
        };
      case "test_tool_with_logging":
        await log("Tool execution started");
        await sleep(50);
        await log("Tool processing data");
        await sleep(50);
        await log("Tool execution completed");
        await sleep(SETTLE_MS);
        return text("Tool with logging executed successfully");
      case "test_error_handling":
        return {
          isError: true,
          content: [{ type: "text", text: "This tool intentionally returns an error for testing" }],
        };
      case "test_tool_with_progress": {
        const progressToken = request.params._meta?.progressToken;
        for (const [index, progress] of [0, 50, 100].entries()) {
          if (index > 0) await sleep(50);
          if (progressToken !== undefined) {
            await extra.sendNotification({
              method: "notifications/progress",
              params: { progressToken, progress, total: 100 },
            });
          }
        }
        await sleep(SETTLE_MS);
        return text("Tool with progress executed successfully");
      }
      case "test_sampling": {
        if (!capabilities.sampling) {
          return { isError: true, content: [{ type: "text", text: "The client does not support sampling" }] };
        }
        // Sent as part of the call (like elicitation below), so it travels on the call's own
        // stream; server.createMessage would use the standalone GET stream, which a client may
        // not have opened yet when the call runs.
        const answer = await extra.sendRequest(
          {
            method: "sampling/createMessage",
            params: {
              messages: [{ role: "user", content: { type: "text", text: String(args.prompt ?? "") } }],
              maxTokens: 100,
            },
          },
          CreateMessageResultSchema,
        );
        const reply = answer.content.type === "text" ? answer.content.text : JSON.stringify(answer.content);
        return text(`LLM response: ${reply}`);
      }
      case "test_elicitation":
      case "test_elicitation_sep1034_defaults":
      case "test_elicitation_sep1330_enums": {
        if (!capabilities.elicitation) {
          return {
            isError: true,
            content: [{ type: "text", text: "The client does not support elicitation" }],
          };
        }
        const params = elicitationFor(request.params.name, String(args.message ?? ""));
        const answer = await extra.sendRequest({ method: "elicitation/create", params }, ElicitResultSchema);
        const content = JSON.stringify(answer.content ?? {});
        return request.params.name === "test_elicitation"
          ? text(`User response: action=${answer.action}, content=${content}`)
          : text(`Elicitation completed: action=${answer.action}, content=${content}`);
      }
      case "json_schema_2020_12_tool":
      case "test_custom_header":
        return text(`Received: ${JSON.stringify(args)}`);
      case "test_reconnection":
        await sleep(100);
        return text("Reconnection test completed");
      default:
        throw Object.assign(new Error(`Unknown tool: ${request.params.name}`), { code: -32602 });
    }
  });

  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: RESOURCES.map(({ text: _text, blob: _blob, ...resource }) => resource),
  }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [TEMPLATE],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const { uri } = request.params;
    const resource = RESOURCES.find((r) => r.uri === uri);
    if (resource) {
      const body = resource.text !== undefined ? { text: resource.text } : { blob: resource.blob ?? "" };
      return { contents: [{ uri, mimeType: resource.mimeType, ...body }] };
    }
    const match = /^test:\/\/template\/([^/]+)\/data$/.exec(uri);
    if (match) {
      const id = decodeURIComponent(match[1]!);
      return {
        contents: [
          {
            uri,
            mimeType: "application/json",
            text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
          },
        ],
      };
    }
    throw Object.assign(new Error(`Resource not found: ${uri}`), { code: -32002 });
  });
  server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    subscriptions.add(request.params.uri);
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    subscriptions.delete(request.params.uri);
    return {};
  });

  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: PROMPTS }));
  server.setRequestHandler(GetPromptRequestSchema, async (request) => {
    const args = request.params.arguments ?? {};
    const user = (content: Record<string, unknown>) => ({ role: "user" as const, content });
    switch (request.params.name) {
      case "test_simple_prompt":
        return { messages: [user({ type: "text", text: "This is a simple prompt for testing." })] };
      case "test_prompt_with_arguments":
        return {
          messages: [
            user({ type: "text", text: `Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'` }),
          ],
        };
      case "test_prompt_with_embedded_resource":
        return {
          messages: [
            user({
              type: "resource",
              resource: {
                uri: args.resourceUri ?? "test://example-resource",
                mimeType: "text/plain",
                text: "Embedded resource content for testing.",
              },
            }),
            user({ type: "text", text: "Please process the embedded resource above." }),
          ],
        };
      case "test_prompt_with_image":
        return {
          messages: [
            user({ type: "image", data: RED_PIXEL_PNG, mimeType: "image/png" }),
            user({ type: "text", text: "Please analyze the image above." }),
          ],
        };
      default:
        throw Object.assign(new Error(`Unknown prompt: ${request.params.name}`), { code: -32602 });
    }
  });
  server.setRequestHandler(CompleteRequestSchema, async (request) => {
    const value = request.params.argument.value;
    const values = ["paris", "park", "party"].filter((candidate) => candidate.startsWith(value));
    return { completion: { values, total: values.length, hasMore: false } };
  });
  return server;
}

function elicitationFor(tool: string, message: string) {
  if (tool === "test_elicitation") {
    return {
      mode: "form" as const,
      message,
      requestedSchema: {
        type: "object" as const,
        properties: {
          username: { type: "string" as const, description: "User's response" },
          email: { type: "string" as const, description: "User's email address" },
        },
        required: ["username", "email"],
      },
    };
  }
  if (tool === "test_elicitation_sep1034_defaults") {
    return {
      mode: "form" as const,
      message: "Please review the defaults",
      requestedSchema: {
        type: "object" as const,
        properties: {
          name: { type: "string" as const, default: "John Doe" },
          age: { type: "integer" as const, default: 30 },
          score: { type: "number" as const, default: 95.5 },
          status: { type: "string" as const, enum: ["active", "inactive", "pending"], default: "active" },
          verified: { type: "boolean" as const, default: true },
        },
      },
    };
  }
  return {
    mode: "form" as const,
    message: "Please choose",
    requestedSchema: {
      type: "object" as const,
      properties: {
        untitledSingle: { type: "string" as const, enum: ["option1", "option2", "option3"] },
        titledSingle: {
          type: "string" as const,
          oneOf: [
            { const: "value1", title: "First Option" },
            { const: "value2", title: "Second Option" },
            { const: "value3", title: "Third Option" },
          ],
        },
        legacyEnum: {
          type: "string" as const,
          enum: ["opt1", "opt2", "opt3"],
          enumNames: ["Option One", "Option Two", "Option Three"],
        },
        untitledMulti: {
          type: "array" as const,
          items: { type: "string" as const, enum: ["option1", "option2", "option3"] },
        },
        titledMulti: {
          type: "array" as const,
          items: {
            anyOf: [
              { const: "value1", title: "First Choice" },
              { const: "value2", title: "Second Choice" },
              { const: "value3", title: "Third Choice" },
            ],
          },
        },
      },
    },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Streamable HTTP with sessions; Host and Origin must be loopback (the DNS-rebinding scenario). */
async function serveHttp(port: number): Promise<void> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const loopback = /^(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/i;
  const http = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const origin = req.headers.origin;
    const originHost = origin ? origin.replace(/^[a-z]+:\/\//i, "").replace(/\/.*$/, "") : undefined;
    if (!loopback.test(req.headers.host ?? "") || (originHost !== undefined && !loopback.test(originHost))) {
      res.writeHead(403, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "Forbidden host" } }),
      );
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    let body: unknown;
    try {
      body = text === "" ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    const sessionId = req.headers["mcp-session-id"];
    let transport = typeof sessionId === "string" ? transports.get(sessionId) : undefined;
    if (!transport && req.method === "POST" && isInitializeRequest(body)) {
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          transports.set(id, created);
        },
      });
      created.onclose = () => {
        if (created.sessionId) transports.delete(created.sessionId);
      };
      await buildServer().connect(created);
      transport = created;
    }
    if (!transport) {
      res.writeHead(sessionId ? 404 : 400, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "No valid session" } }),
      );
      return;
    }
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((resolve) => http.listen(port, "127.0.0.1", resolve));
  const address = http.address();
  const bound = typeof address === "object" && address ? address.port : port;
  process.stdout.write(`LISTENING http://127.0.0.1:${bound}/mcp\n`);
}

const argv = process.argv.slice(2);
if (argv.includes("--http")) {
  const portIndex = argv.indexOf("--port");
  await serveHttp(portIndex >= 0 ? Number(argv[portIndex + 1]) : 0);
} else {
  await buildServer().connect(new StdioServerTransport());
}

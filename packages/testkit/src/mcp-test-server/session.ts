/**
 * One 2025-era MCP session of the test server: a low-level v2 SDK `Server` (bound to the 2025
 * revision its client's `initialize` asks for) whose handlers answer from the current script, log
 * every tools/call to the call log (and every one cancelled while it ran to the cancellation log)
 * and every resources/read to the read log, and can be told the lists changed.
 * The low-level API is used on purpose: it sends lists as written, unvalidated.
 */
import { appendFileSync } from "node:fs";
import {
  type JSONRPCMessage,
  ProtocolError,
  type RequestId,
  SdkError,
  SdkErrorCode,
  Server,
  type ServerContext,
  specTypeSchemas,
  type Transport,
} from "@modelcontextprotocol/server";
import { TOOLBUS_VERSION } from "@toolbus/protocol";
import { type CallExtra, runBehavior, wireError } from "./behaviors.js";
import {
  findTool,
  listedPrompts,
  listedResources,
  listedResourceTemplates,
  type Page,
  page,
  type ScriptChanges,
  toolsPage,
} from "./listing.js";
import type { CallLogLine, CancelLogLine, ParsedTestServerScript, ReadLogLine } from "./script.js";
import { log } from "./script-source.js";

export const TEST_SERVER_INFO = { name: "toolbus-mcp-test-server", version: TOOLBUS_VERSION };
const INVALID_PARAMS = -32602;
const RESOURCE_NOT_FOUND = -32002;

export interface SessionDeps {
  script: () => ParsedTestServerScript;
  callLogPath: string | undefined;
  cancelLogPath: string | undefined;
  readLogPath: string | undefined;
}

export interface TestSession {
  server: Server;
  /** Connects the session's server to `transport`, error codes going out as thrown (see keptCodes). */
  connect(transport: Transport): Promise<void>;
  /** Tells this session's client what changed; a session whose transport is gone is skipped. */
  notify(changes: ScriptChanges): Promise<void>;
}

export function createSession({ script, callLogPath, cancelLogPath, readLogPath }: SessionDeps): TestSession {
  const initial = script();
  const withResources = initial.resources !== undefined || initial.resourceTemplates !== undefined;
  const withPrompts = initial.prompts !== undefined;
  const withCompletions = initial.completions !== undefined;
  const server = new Server({ ...TEST_SERVER_INFO, ...initial.serverInfo } as typeof TEST_SERVER_INFO, {
    capabilities: {
      tools: { listChanged: true },
      logging: {},
      ...(withResources ? { resources: { listChanged: true } } : {}),
      ...(withPrompts ? { prompts: { listChanged: true } } : {}),
      ...(withCompletions ? { completions: {} } : {}),
    },
    ...(initial.instructions !== undefined ? { instructions: initial.instructions } : {}),
  });

  // v2 sends a thrown -32002 (resource not found) as -32602 on every revision; the v1 SDK sent
  // it as thrown, and the tests expect it so (a read that misses, a `throw` behaviour's code).
  // The handlers note the code they threw by request id; `connect` puts it back on the wire.
  const keptCodes = new Map<RequestId, number>();
  const keepCode = (ctx: ServerContext, error: unknown): never => {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === RESOURCE_NOT_FOUND) keptCodes.set(ctx.mcpReq.id, code);
    throw error;
  };

  server.setRequestHandler("tools/list", (request) => {
    const result = paged(toolsPage(script(), request.params?.cursor), "tools");
    return result as never;
  });

  server.setRequestHandler("tools/call", (request, ctx) => {
    const extra = callExtra(ctx);
    const { name, arguments: args, _meta } = request.params;
    appendLine(callLogPath, {
      at: new Date().toISOString(),
      pid: process.pid,
      tool: name,
      ...(args !== undefined ? { arguments: args as CallLogLine["arguments"] } : {}),
      ...(_meta !== undefined ? { _meta: _meta as CallLogLine["_meta"] } : {}),
    });
    const tool = findTool(script(), name);
    if (!tool) throw wireError(INVALID_PARAMS, `Unknown tool: ${name}`);
    const cancelled = () => {
      const reason: unknown = extra.signal.reason;
      appendLine(cancelLogPath, {
        at: new Date().toISOString(),
        tool: name,
        ...(typeof reason === "string" ? { reason } : {}),
        ...(_meta !== undefined ? { _meta: _meta as CancelLogLine["_meta"] } : {}),
      });
    };
    extra.signal.addEventListener("abort", cancelled, { once: true });
    return runBehavior(tool.behavior, args ?? {}, extra)
      .catch((error: unknown) => keepCode(ctx, error))
      .finally(() => extra.signal.removeEventListener("abort", cancelled));
  });

  if (withResources) {
    server.setRequestHandler("resources/list", (request) => {
      const current = script();
      const result = page(listedResources(current), current.resourcesPageSize, request.params?.cursor);
      return paged(result, "resources") as never;
    });
    server.setRequestHandler("resources/templates/list", (request) => {
      const current = script();
      const result = page(
        listedResourceTemplates(current),
        current.resourcesPageSize,
        request.params?.cursor,
      );
      return paged(result, "resourceTemplates") as never;
    });
    server.setRequestHandler("resources/read", (request, ctx) => {
      const { uri } = request.params;
      appendLine(readLogPath, { at: new Date().toISOString(), uri });
      const resource = script().resources?.find((r) => r.uri === uri);
      if (!resource) return keepCode(ctx, wireError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}`));
      const mimeType = resource.mimeType ? { mimeType: resource.mimeType } : {};
      const body = resource.blob !== undefined ? { blob: resource.blob } : { text: resource.text ?? "" };
      return { contents: [{ uri, ...mimeType, ...body }] };
    });
  }
  if (withPrompts) {
    server.setRequestHandler("prompts/list", (request) => {
      const current = script();
      const result = page(listedPrompts(current), current.promptsPageSize, request.params?.cursor);
      return paged(result, "prompts") as never;
    });
    server.setRequestHandler("prompts/get", (request) => {
      const { name } = request.params;
      const args = request.params.arguments ?? {};
      const prompt = script().prompts?.find((p) => p.name === name);
      if (!prompt) throw wireError(INVALID_PARAMS, `Unknown prompt: ${name}`);
      const missingArgument = prompt.arguments?.find((a) => a.required && args[a.name] === undefined);
      if (missingArgument)
        throw wireError(INVALID_PARAMS, `Missing required argument: ${missingArgument.name}`);
      const text = prompt.text.replace(/\{(\w+)\}/g, (whole, key: string) => args[key] ?? whole);
      return {
        ...(prompt.description !== undefined ? { description: prompt.description } : {}),
        messages: [{ role: "user", content: { type: "text", text } }],
      };
    });
  }
  if (withCompletions) {
    server.setRequestHandler("completion/complete", (request) => {
      const { name, value } = request.params.argument;
      const values = (script().completions?.[name] ?? []).filter((candidate) => candidate.startsWith(value));
      return { completion: { values, total: values.length, hasMore: false } };
    });
  }
  return {
    server,
    connect(transport) {
      const send = transport.send.bind(transport);
      transport.send = (message, options) => send(withKeptCode(message, keptCodes), options);
      return server.connect(transport);
    },
    async notify(changes) {
      try {
        if (changes.tools) await server.sendToolListChanged();
        if (changes.resources && withResources) await server.sendResourceListChanged();
        if (changes.prompts && withPrompts) await server.sendPromptListChanged();
      } catch (error) {
        log(`could not notify a session: ${(error as Error).message}`);
      }
    },
  };
}

function withKeptCode(message: JSONRPCMessage, keptCodes: Map<RequestId, number>): JSONRPCMessage {
  if (!("error" in message) || message.id === undefined) return message;
  const code = keptCodes.get(message.id);
  if (code === undefined) return message;
  keptCodes.delete(message.id);
  return { ...message, error: { ...message.error, code } };
}

/** The v2 request context as behaviours see it, failures worded as the v1 SDK worded them. */
function callExtra(ctx: ServerContext): CallExtra {
  return {
    signal: ctx.mcpReq.signal,
    _meta: ctx.mcpReq._meta,
    // Checked against the schemas the v1 test server used: v2's own check for sampling/createMessage
    // is the with-tools result, which would take answers the v1 server refused.
    sendRequest: (request) =>
      (
        ctx.mcpReq.send(
          request as never,
          request.method === "sampling/createMessage"
            ? specTypeSchemas.CreateMessageResult
            : specTypeSchemas.ElicitResult,
        ) as Promise<Record<string, unknown>>
      ).catch((error: unknown) => {
        throw v1Worded(error);
      }),
    sendNotification: (notification) => ctx.mcpReq.notify(notification as never),
  };
}

/**
 * The v1 SDK's wording of a failed request (`MCP error <code>: <message>`), which tests expect in
 * the error results and stderr lines of the elicit and sample behaviours; v2 leaves the message bare.
 */
function v1Worded(error: unknown): Error {
  if (error instanceof ProtocolError) return new Error(`MCP error ${error.code}: ${error.message}`);
  if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout)
    return new Error(`MCP error -32001: ${error.message}`);
  if (error instanceof SdkError && error.code === SdkErrorCode.ConnectionClosed)
    return new Error(`MCP error -32000: ${error.message}`);
  return error instanceof Error ? error : new Error(String(error));
}

function paged<T>(result: Page<T>, key: string): Record<string, unknown> {
  if ("invalidCursor" in result) throw wireError(INVALID_PARAMS, `Invalid cursor: ${result.invalidCursor}`);
  return {
    [key]: result.items,
    ...(result.nextCursor !== undefined ? { nextCursor: result.nextCursor } : {}),
  };
}

/** Synchronous, so a call that crashes the process is still on record. */
function appendLine(path: string | undefined, line: CallLogLine | CancelLogLine | ReadLogLine): void {
  if (path) appendFileSync(path, `${JSON.stringify(line)}\n`);
}

/**
 * One MCP session of the test server: a low-level SDK `Server` whose handlers answer from the
 * current script, log every tools/call to the call log (and every one cancelled while it ran to
 * the cancellation log) and every resources/read to the read log, and can be told the lists changed.
 * The low-level API is used on purpose: it sends lists as written, unvalidated.
 */
import { appendFileSync } from "node:fs";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  type ServerResult,
} from "@modelcontextprotocol/sdk/types.js";
import { TOOLBUS_VERSION } from "@toolbus/protocol";
import { runBehavior, wireError } from "./behaviors.js";
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

  server.setRequestHandler(ListToolsRequestSchema, (request) => {
    const result = paged(toolsPage(script(), request.params?.cursor), "tools");
    return result as ServerResult;
  });

  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
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
    return runBehavior(tool.behavior, args ?? {}, extra).finally(() =>
      extra.signal.removeEventListener("abort", cancelled),
    );
  });

  if (withResources) {
    server.setRequestHandler(ListResourcesRequestSchema, (request) => {
      const current = script();
      const result = page(listedResources(current), current.resourcesPageSize, request.params?.cursor);
      return paged(result, "resources") as ServerResult;
    });
    server.setRequestHandler(ListResourceTemplatesRequestSchema, (request) => {
      const current = script();
      const result = page(
        listedResourceTemplates(current),
        current.resourcesPageSize,
        request.params?.cursor,
      );
      return paged(result, "resourceTemplates") as ServerResult;
    });
    server.setRequestHandler(ReadResourceRequestSchema, (request) => {
      const { uri } = request.params;
      appendLine(readLogPath, { at: new Date().toISOString(), uri });
      const resource = script().resources?.find((r) => r.uri === uri);
      if (!resource) throw wireError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}`);
      const mimeType = resource.mimeType ? { mimeType: resource.mimeType } : {};
      const body = resource.blob !== undefined ? { blob: resource.blob } : { text: resource.text ?? "" };
      return { contents: [{ uri, ...mimeType, ...body }] };
    });
  }
  if (withPrompts) {
    server.setRequestHandler(ListPromptsRequestSchema, (request) => {
      const current = script();
      const result = page(listedPrompts(current), current.promptsPageSize, request.params?.cursor);
      return paged(result, "prompts") as ServerResult;
    });
    server.setRequestHandler(GetPromptRequestSchema, (request) => {
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
    server.setRequestHandler(CompleteRequestSchema, (request) => {
      const { name, value } = request.params.argument;
      const values = (script().completions?.[name] ?? []).filter((candidate) => candidate.startsWith(value));
      return { completion: { values, total: values.length, hasMore: false } };
    });
  }
  return {
    server,
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
